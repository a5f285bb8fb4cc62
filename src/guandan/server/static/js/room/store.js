// The room page's one state store: the table state as the server last sent it plus what this
// page adds (the arranged hand, the selection, open panels, notices), with a small
// subscribe/update API. Components read `store.state` and render; a change goes through
// `store.update(mutate, ...topics)`, which runs mutate(state) and then tells each topic's
// subscribers, in order, synchronously.
//
// Topics (who listens, see room.js): "page" (everything), "page-soon" (everything at the next
// display frame, coalesced), "table", "overlay" (detail: force), "hand" (the hand and the action
// buttons), "actions" (the action buttons now), "notices", "conn", "bomb" (detail: the action).

/**
 * A store over `state`. subscribe(topic, fn) returns the unsubscribe function; update(mutate,
 * ...topics) runs mutate(state) (when given) and then fn(detail) for each subscriber of each
 * topic, a topic being a name or [name, detail]; notify(...topics) is update without a change.
 * After close() nothing is told any more (the page is gone).
 */
export function createStore(state) {
  const subs = new Map();
  let closed = false;
  const store = {
    state,
    get closed() {
      return closed;
    },
    subscribe(topic, fn) {
      if (!subs.has(topic)) subs.set(topic, new Set());
      subs.get(topic).add(fn);
      return () => subs.get(topic).delete(fn);
    },
    update(mutate, ...topics) {
      if (typeof mutate === "function") mutate(state);
      for (const topic of topics) {
        if (closed) return store;
        const [name, detail] = Array.isArray(topic) ? topic : [topic, undefined];
        for (const fn of [...(subs.get(name) || [])]) fn(detail);
      }
      return store;
    },
    notify(...topics) {
      return store.update(null, ...topics);
    },
    close() {
      closed = true;
      subs.clear();
    },
  };
  return store;
}

/** The state of a room page before anything arrived. */
export function initialState() {
  return {
    room: null,
    view: null,
    role: null,
    seat: null,
    seq: -1,
    clock: null,
    auto: [false, false, false, false],
    autoReason: [null, null, null, null],
    between: null,
    final: null,
    conn: "connecting",
    notFound: false,
    actSent: false, // an action is on its way: no second one before the server answers
    display: [], // the hand in display order (card texts)
    groups: [], // arranged groups of the hand
    selected: new Set(), // display indices
    chooser: null, // list of actions offered in the reading chooser
    dealResult: null,
    gameOver: null,
    resultHidden: false, // the player closed the result panel of this pause
    readySent: null, // deal number the ready was sent for
    seenJiefeng: "",
    arrKey: "",
    arr: { mode: "level", custom: [] },
    hints: null, // {key, list, index} from the server's hints frame (index -1 after 重选/理牌: no counter, the next 提示 shows the first)
    hintWanted: false,
    hintAskedKey: null, // positionKey() when the hints list was asked for
    hintToast: null, // {key, text}: a hint message about the position key (hidden when it passes)
    drawer: false,
    keysHelp: false, // the legend of the keyboard keys (room/keyboard.js)
    focusIndex: 0, // the hand card that holds the keyboard focus (display index)
    tracker: false,
    lastTrick: false,
    notices: [], // {id, text, kind, deal ("game-deal" of a deal-scoped notice, else null), until}
    prevLast: null, // last_actions of the previous state (to animate new plays)
    prevTurn: false,
    fresh: null, // seats whose play is new since the last table render
    receivedUntil: 0,
    receivedKey: "",
    clockStart: new Map(), // deadline_ms -> epoch ms first seen (for the ring)
    movingTo: null,
  };
}

/** The store of one room page: the state, the room's id and the app context (ctx.me, ctx.navigate). */
export function createRoomStore(roomId, ctx) {
  const store = createStore(initialState());
  store.roomId = roomId;
  store.ctx = ctx;
  return store;
}
