// Plays in words (issue 25, items 4 and 5), with no DOM and the language passed in, so that node can
// test them: the name of a card for screen readers ("红桃 10" / "10 of hearts", the wild named as
// such) and the phrase a play is called aloud with (报牌): "对子 7" / "pair of sevens", "炸弹 五个7",
// "不要" / "pass", and, once the player has 10 or fewer cards left after the play (R32), "还剩两张" /
// "two cards left". Every word comes from the string tables (i18n_app.js).

import { STRINGS } from "./i18n.js";
import { isWild, parseCard } from "./cards.js";

/** The text of key in language lang ("zh" | "en"; English when the key or language is missing), {params} filled. */
export function word(lang, key, params) {
  const table = STRINGS[lang] || STRINGS.en;
  let s = table[key];
  if (s === undefined) s = STRINGS.en[key];
  if (s === undefined) return key;
  return params ? s.replace(/\{(\w+)\}/g, (m, name) => (params[name] === undefined || params[name] === null ? m : String(params[name]))) : s;
}

/** A rank text ("2".."9", "T", "J", "Q", "K", "A", "SJ", "BJ"; "10" is read as "T") as a word, plural when many. */
export function rankWord(rank, lang, plural = false) {
  const r = rank === "10" ? "T" : String(rank);
  return word(lang, `${plural ? "rank_words" : "rank_word"}_${r.toLowerCase()}`);
}

/**
 * The name of a card for screen readers: "TH" -> "红桃 10" / "ten of hearts"; "SJ" -> "小王" /
 * "small joker"; the wild (R8: the heart of the deal's level, level a rank text) -> "红桃 2，逢人配" /
 * "two of hearts, wild". An unknown text is returned as it is.
 */
export function cardName(card, level, lang) {
  const c = parseCard(card);
  if (!c) return String(card);
  if (c.suit === null) return rankWord(card, lang);
  const name = word(lang, "card_name", { rank: rankWord(card[0], lang), suit: word(lang, `suit_name_${c.suit.toLowerCase()}`) });
  return isWild(card, level) ? word(lang, "card_name_wild", { card: name }) : name;
}

/** The words for a count of 1..10 ("两" / "two"); the digits for any other number. */
export function countWord(n, lang) {
  return Number.isInteger(n) && n >= 1 && n <= 10 ? word(lang, `count_word_${n}`) : String(n);
}

/**
 * The phrase a play is called with: action [type, rank, cards] as the server lists it. A single
 * says its rank; a pair, triple or full house its rank; a straight, tube, plate or straight flush
 * its top rank; a bomb its number of cards and rank; the joker bomb and a pass their names.
 * "" for anything else (tribute and return are not called).
 */
export function playPhrase(action, lang) {
  if (!Array.isArray(action)) return "";
  const [type, rank, cards] = action;
  const n = Array.isArray(cards) ? cards.length : 0;
  switch (type) {
    case "pass":
      return word(lang, "call_pass");
    case "joker_bomb":
      return word(lang, "call_joker_bomb");
    case "single":
      return word(lang, "call_single", { rank: rankWord(rank, lang) });
    case "pair":
    case "triple":
    case "full_house":
      return word(lang, `call_${type}`, { ranks: rankWord(rank, lang, true) });
    case "straight":
    case "tube":
    case "plate":
    case "straight_flush":
      return word(lang, `call_${type}`, { rank: rankWord(rank, lang) });
    case "bomb":
      return word(lang, "call_bomb", { count: countWord(n, lang), ranks: rankWord(rank, lang, true) });
    default:
      return "";
  }
}

/** What a player with left cards after a play announces (R32: 10 or fewer): "还剩两张" / "two cards left"; "" otherwise. */
export function leftPhrase(left, lang) {
  if (!Number.isInteger(left) || left < 1 || left > 10) return "";
  return left === 1 ? word(lang, "call_left_1") : word(lang, "call_left_n", { count: countWord(left, lang) });
}

/**
 * The whole call of a play: the play's phrase, then the cards left (R32) when the play was not a
 * pass and left 1..10 cards. left: the seat's cards after the play (null when unknown).
 */
export function callout(action, left, lang) {
  const play = playPhrase(action, lang);
  if (!play) return "";
  const rest = Array.isArray(action) && action[0] !== "pass" ? leftPhrase(left, lang) : "";
  return rest ? `${play}${word(lang, "call_joiner")}${rest}` : play;
}
