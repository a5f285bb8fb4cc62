// When only one card can be paid as tribute it is selected already (issue 25 item 6, seed 000): the
// tribute is the payer's highest card other than the heart wild (R45), so with a single candidate
// face (one or two copies of it) the choice is made and one tap on 进贡 pays it. Selected once per
// deal: a player who clears the selection is not overruled.

import { myTurn } from "./model.js";

/** On each state: select the only card the seat to act can pay as tribute (once per deal). */
export function preselectTribute(store) {
  const st = store.state;
  const v = st.view;
  if (!v || st.between || v.phase !== "tribute" || !myTurn(store)) return;
  const key = `${v.game}-${v.deal}`;
  if (st.tributePicked === key) return;
  const faces = new Set();
  for (const a of Array.isArray(v.legal_actions) ? v.legal_actions : []) {
    if (Array.isArray(a) && Array.isArray(a[2])) a[2].forEach((c) => faces.add(c));
  }
  if (faces.size !== 1) return;
  const [card] = faces;
  const index = st.display.indexOf(card);
  if (index < 0) return;
  st.tributePicked = key;
  if (st.selected.size === 0) st.selected.add(index);
}
