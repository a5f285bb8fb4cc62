// Guandan rules in plain words, in Chinese and English (issue 7, item 11): the presets of
// docs/rules.md section P with their names and a one-line description, every rule option and value of
// section P as a phrase ("打到 8", "双下升 6 级" / "Play to 8", "+6 for a double win"), move
// clocks (R53), deal results in Guandan terms (双下 / 单下 / 平下, AMB-23) and bot difficulties.
//
// Every function takes an optional `lang` ("zh" | "en"; default: the UI's current language), so
// the table (front-table), the lobby and the pages share the same words. No DOM here.

import { getLang } from "./i18n.js";

/**
 * Option values of every preset (docs/rules.md section P), as GET /api/presets sends them
 * (tests/test_browser_pages.py checks this table against guandan.core.rules.PRESETS).
 */
export const PRESET_OPTIONS = (() => {
  const official = {
    upgrade: [3, 2, 1],
    target_level: "A",
    pass_target: "strict",
    target_no_upgrade_with_last: false,
    a_fail_limit: 3,
    after_target: "game_over",
    streaks: false,
    return_rule: "le10",
    double_tribute_by: "card",
    double_tribute_tie: "seat",
    return_to: "payer",
    anti_tribute_single: "payer",
    full_house_joker_pair: true,
    first_leader: "turned_card",
    card_counts: "always",
    points: false,
    clock_lead_s: null,
    clock_follow_s: null,
    no_shuffle: false,
    single_deal: false,
  };
  return {
    official,
    anhui: { ...official, upgrade: [6, 4, 2], return_rule: "any", double_tribute_tie: "random", first_leader: "random_seat", points: true },
    classic: { ...official, after_target: "restart", return_rule: "any", double_tribute_by: "remaining_cards", anti_tribute_single: "team_if_opponents" },
    huaian: { ...official },
    yangzhou: { ...official, target_no_upgrade_with_last: true, streaks: true, return_rule: "any", return_to: "next_seat" },
    maanshan: { ...official, return_rule: "any", return_to: "next_seat" },
    aicomp: { ...official, pass_target: "double_up_only", a_fail_limit: 2, first_leader: "random_seat" },
  };
})();

/** Preset ids in the order of docs/rules.md section P. */
export const PRESET_IDS = Object.keys(PRESET_OPTIONS);

/** Option ids in the order of docs/rules.md section P (`guandan rules` lists the same). */
export const OPTION_IDS = Object.keys(PRESET_OPTIONS.official);

/** The move-clock options (R53); shown apart from the other rule changes. */
export const CLOCK_OPTIONS = ["clock_lead_s", "clock_follow_s"];

/** The house modes (docs/rules.md P.1): switches of their own in the create-room form. */
export const HOUSE_OPTIONS = ["no_shuffle", "single_deal"];

/** Valid values of the options that take one of a few values (docs/rules.md section P). */
export const OPTION_CHOICES = {
  target_level: ["A", "8"],
  pass_target: ["strict", "lenient", "double_up_only"],
  target_no_upgrade_with_last: [false, true],
  after_target: ["game_over", "restart"],
  streaks: [false, true],
  return_rule: ["le10", "any", "le10_partner_only"],
  double_tribute_by: ["card", "remaining_cards"],
  double_tribute_tie: ["seat", "random"],
  return_to: ["payer", "next_seat"],
  anti_tribute_single: ["payer", "team_if_opponents"],
  full_house_joker_pair: [true, false],
  first_leader: ["turned_card", "random_seat"],
  card_counts: ["always", "le10"],
  points: [false, true],
  no_shuffle: [false, true],
  single_deal: [false, true],
};

/** Bot difficulties, weakest first (docs/table-contract.md section 1); "random" only in test rooms. */
export const DIFFICULTIES = ["easy", "normal", "hard", "expert"];

const PRESETS_TEXT = {
  official: {
    zh: ["官方规则", "2022 年全国赛试行规则（沿袭 2017 年全国规则）：双下升 3 级、单下升 2 级、平下升 1 级，打到 A，打 A 三次不过退回 2。"],
    en: ["Official", "2022 trial competition rules (2017 national lineage): +3/+2/+1, play to A, back to 2 after three failed A attempts."],
  },
  anhui: {
    zh: ["安徽规则", "安徽平台：升 6/4/2 级，可还任意牌，贡牌相同随机分配，每局积分和等级称号。"],
    en: ["Anhui", "Anhui platform: +6/+4/+2, any card may be returned, equal tributes shared at random, per-deal points and the title ladder."],
  },
  classic: {
    zh: ["经典规则", "经典网络规则：过 A 后从 2 重打，双贡按剩余牌数分配，1-3 单贡时两名输家的大王合计可抗贡。"],
    en: ["Classic", "Classic online rules: start again at 2 after passing A, double tribute by remaining cards, the losers' big jokers together can refuse a single tribute after 1-3."],
  },
  huaian: {
    zh: ["淮安规则", "淮安规则（与官方规则相同）。"],
    en: ["Huai'an", "Huai'an rules (the same values as the official rules)."],
  },
  yangzhou: {
    zh: ["扬州规则", "扬州：连续头游/末游加减级，打到目标级带末游不升级，可还任意牌并还给下家。"],
    en: ["Yangzhou", "Yangzhou: streak bonuses and penalties, no upgrade at the target when winning with a partner in last place, any card returned to the next seat."],
  },
  maanshan: {
    zh: ["马鞍山规则", "马鞍山：可还任意牌，还给下家。"],
    en: ["Ma'anshan", "Ma'anshan: any card may be returned, to the next seat."],
  },
  aicomp: {
    zh: ["AI 竞赛规则", "掼蛋 AI 竞赛平台：只有双下才能过 A，打 A 两次不过退回 2，首局随机先出。"],
    en: ["AI competition", "The Guandan AI-competition platform: only a 1-2 passes A, back to 2 after two failed attempts, random first leader."],
  },
};

const OPTION_NAMES = {
  upgrade: ["升级", "Upgrade"],
  target_level: ["目标级", "Target level"],
  pass_target: ["过关条件", "Passing the target"],
  target_no_upgrade_with_last: ["目标级带末游", "Target deal with last place"],
  a_fail_limit: ["打 A 失败次数上限", "Failed attempts allowed"],
  after_target: ["过关之后", "After passing the target"],
  streaks: ["连续头游/末游", "Streaks"],
  return_rule: ["还贡限制", "Return limit"],
  double_tribute_by: ["双贡分配", "Double tribute shared by"],
  double_tribute_tie: ["贡牌相同", "Equal tribute cards"],
  return_to: ["双贡还给", "Double-tribute returns go to"],
  anti_tribute_single: ["单贡抗贡", "Anti-tribute in a single tribute"],
  full_house_joker_pair: ["三带二带对王", "Joker pair in a full house"],
  first_leader: ["首局先出", "First lead of a game"],
  card_counts: ["报牌", "Card counts"],
  points: ["积分", "Points"],
  clock_lead_s: ["首出限时", "Clock to lead"],
  clock_follow_s: ["跟牌限时", "Clock to follow"],
  no_shuffle: ["不洗牌", "No shuffle"],
  single_deal: ["单局", "Single deal"],
};

const L = (lang) => (lang === "zh" || lang === "en" ? lang : getLang() === "zh" ? "zh" : "en");
const secs = (v) => (Number.isInteger(v) ? String(v) : String(Math.round(Number(v) * 10) / 10));

/** Words of the three upgrade amounts [1-2, 1-3, 1-4] (R35, AMB-16). */
function upgradeWords(up, lang) {
  const names = lang === "zh" ? ["双下", "单下", "平下"] : ["a double win (1-2)", "1-3", "1-4"];
  const parts = (Array.isArray(up) ? up : []).slice(0, 3).map((n, i) => {
    if (lang === "zh") return n ? `${names[i]}升 ${n} 级` : `${names[i]}不升级`;
    return n ? `+${n} for ${names[i]}` : `no upgrade for ${names[i]}`;
  });
  return parts.join(lang === "zh" ? "、" : ", ");
}

/**
 * One option value as a phrase. opts: the whole option set (for the target level in A phrases).
 * Returns "" for an unknown option.
 */
function valueWords(option, value, opts, lang) {
  const zh = lang === "zh";
  const tgt = (opts && opts.target_level) || "A";
  switch (option) {
    case "upgrade":
      return upgradeWords(value, lang);
    case "target_level":
      return zh ? `打到 ${value}` : `Play to ${value}`;
    case "pass_target":
      return {
        strict: zh ? "在本方级数的局中打出双下或单下（1-2 / 1-3）才过关" : "Pass the target with 1-2 or 1-3 in a deal at your own level",
        lenient: zh ? "在对方级数的局中打出双下或单下（1-2 / 1-3）也能过关" : "1-2 or 1-3 passes the target even at the opponents' level",
        double_up_only: zh ? "只有双下才能过关" : "Only a double win (1-2) passes the target",
      }[value] || String(value);
    case "target_no_upgrade_with_last":
      return value
        ? zh ? "打目标级时带末游取胜不升级" : "No upgrade at the target when your partner is last"
        : zh ? "打目标级时带末游取胜照常升级" : "Normal upgrade at the target even when your partner is last";
    case "a_fail_limit":
      return value === null || value === undefined
        ? zh ? `打 ${tgt} 不限次数` : `Unlimited attempts at ${tgt}`
        : zh ? `打 ${tgt} ${value} 次不过退回 2` : `Back to 2 after ${value} failed attempts at ${tgt}`;
    case "after_target":
      return value === "restart"
        ? zh ? `过 ${tgt} 后从 2 重打` : `After passing ${tgt}, start again at 2`
        : zh ? `过 ${tgt} 即结束` : `Passing ${tgt} ends the game`;
    case "streaks":
      return value
        ? zh ? "连续头游/末游加减级" : "Streak bonus and penalty for 3+ first or last places in a row"
        : zh ? "连续头游/末游不加减级" : "No streak bonuses";
    case "return_rule":
      return {
        le10: zh ? "还贡不超过 10" : "Return a card of 10 or lower",
        any: zh ? "可还任意牌" : "Any card may be returned",
        le10_partner_only: zh ? "还给队友时才须不超过 10" : "10 or lower only when returning to your partner",
      }[value] || String(value);
    case "double_tribute_by":
      return value === "remaining_cards"
        ? zh ? "双贡按剩余牌数分配" : "Double tribute shared by remaining cards"
        : zh ? "双贡按牌大小分配" : "Double tribute: first place takes the higher card";
    case "double_tribute_tie":
      return value === "random"
        ? zh ? "贡牌相同时随机分配" : "Equal tribute cards shared at random"
        : zh ? "贡牌相同时按座位分配" : "Equal tribute cards shared by seat";
    case "return_to":
      return value === "next_seat"
        ? zh ? "双贡还给下家" : "Double-tribute returns go to the next seat"
        : zh ? "双贡还给进贡者" : "Double-tribute returns go to the payer";
    case "anti_tribute_single":
      return value === "team_if_opponents"
        ? zh ? "1-3 单贡时两名输家的大王合计可抗贡" : "Single tribute after 1-3: the losers' big jokers together refuse it"
        : zh ? "单贡时进贡者自己有两张大王才抗贡" : "Single tribute: only the payer's own two big jokers refuse it";
    case "full_house_joker_pair":
      return value
        ? zh ? "三带二可带对王" : "A joker pair may be a full house's pair"
        : zh ? "三带二不能带对王" : "No joker pair in a full house";
    case "first_leader":
      return value === "random_seat"
        ? zh ? "首局随机先出" : "First lead of a game: a random seat"
        : zh ? "首局翻牌定先出" : "First lead of a game: whoever gets the turned card";
    case "card_counts":
      return value === "le10"
        ? zh ? "剩 10 张及以下才报牌" : "Card counts shown at 10 or fewer"
        : zh ? "随时显示剩余牌数" : "Card counts always shown";
    case "points":
      return value
        ? zh ? "每局积分和等级称号" : "Per-deal points and the title ladder"
        : zh ? "不计积分" : "No points";
    case "clock_lead_s":
      return value === null || value === undefined
        ? zh ? "首出不限时" : "No clock to lead"
        : zh ? `首出限时 ${secs(value)} 秒` : `${secs(value)} s to lead`;
    case "clock_follow_s":
      return value === null || value === undefined
        ? zh ? "跟牌不限时" : "No clock to follow"
        : zh ? `跟牌限时 ${secs(value)} 秒` : `${secs(value)} s to follow`;
    case "no_shuffle":
      return value
        ? zh ? "不洗牌" : "No shuffle"
        : zh ? "每局洗牌" : "Every deal shuffled";
    case "single_deal":
      return value
        ? zh ? "单局（级数随机）" : "Single deal at a random level"
        : zh ? "打满一场" : "A whole game";
    default:
      return "";
  }
}

function same(a, b) {
  if (Array.isArray(a) || Array.isArray(b)) return JSON.stringify(a) === JSON.stringify(b);
  if (typeof a === "number" && typeof b === "number") return a === b;
  return a === b || (a !== null && b !== null && a !== undefined && b !== undefined && String(a) === String(b));
}

/** Whether value is a preset id. */
export const isPreset = (value) => typeof value === "string" && Object.prototype.hasOwnProperty.call(PRESET_OPTIONS, value);

/** Whether value is a bot difficulty (or the test bot "random"). */
export const isDifficulty = (value) => typeof value === "string" && (DIFFICULTIES.includes(value) || value === "random");

/** Name of a preset: "官方规则" / "Official"; an unknown id is returned as given. */
export function presetName(id, lang) {
  const p = PRESETS_TEXT[id];
  return p ? p[L(lang)][0] : String(id || "");
}

/** One-line description of a preset (README's preset table, docs/rules.md section P); "" when unknown. */
export function presetDescription(id, lang) {
  const p = PRESETS_TEXT[id];
  return p ? p[L(lang)][1] : "";
}

/** Name of a rule option: "还贡限制" / "Return limit"; an unknown id is returned as given. */
export function optionName(id, lang) {
  const n = OPTION_NAMES[id];
  return n ? n[L(lang) === "zh" ? 0 : 1] : String(id || "");
}

/** One option value in words ("打到 8", "Play to 8"); opts gives the target level for A phrases. */
export function optionWords(option, value, lang, opts) {
  return valueWords(option, value, opts, L(lang));
}

/**
 * The rules of a room in plain words (issue 7, item 11).
 *
 * preset: preset id ("official", ...; an unknown id is shown as given and compared with official);
 * options: the room's options, either all of them (room.options, RuleSet.to_dict()) or only the
 * overrides (room.overrides) — options equal to the preset's value are left out either way, and
 * so are the move clocks (see clocksInWords); lang: "zh" | "en" (default: the UI language).
 *
 * Returns {preset, name, description, overrides: [{option, value, name, text}], text}: `text` is
 * the one line for lists, e.g. "官方规则 · 打到 8 · 双下升 6 级、单下升 4 级、平下升 2 级" or
 * "Official · Play to 8 · +6 for a double win (1-2), +4 for 1-3, +2 for 1-4".
 */
export function rulesInWords(preset, options, lang) {
  const lg = L(lang);
  const base = PRESET_OPTIONS[preset] || PRESET_OPTIONS.official;
  const opts = { ...base, ...(options && typeof options === "object" ? options : {}) };
  const overrides = [];
  // the target level first: it is what players ask about first ("打到几？")
  for (const k of ["target_level", ...OPTION_IDS.filter((x) => x !== "target_level")]) {
    if (CLOCK_OPTIONS.includes(k)) continue;
    if (!options || !(k in options) || same(options[k], base[k])) continue;
    overrides.push({ option: k, value: options[k], name: optionName(k, lg), text: valueWords(k, options[k], opts, lg) });
  }
  const name = presetName(preset || "official", lg);
  return {
    preset: preset || "official",
    name,
    description: presetDescription(preset, lg),
    overrides,
    text: [name, ...overrides.map((o) => o.text)].join(" · "),
  };
}

/**
 * Move clocks in words (R53, AMB-25; docs/table-contract.md sections 1 and 9).
 * clocks: {lead_s, follow_s, default} (room.clocks) or null. Returns e.g. "首出 60 秒、跟牌 30 秒",
 * "不限时" / "No clock", and for the default clocks of a waiting room "2 人以上：首出 60 秒、跟牌 30 秒".
 */
export function clocksInWords(clocks, lang, defaults) {
  const lg = L(lang);
  const zh = lg === "zh";
  const c = clocks && typeof clocks === "object" ? clocks : {};
  let lead = c.lead_s;
  let follow = c.follow_s;
  const isDefault = Boolean(c.default) && (lead === null || lead === undefined) && (follow === null || follow === undefined);
  if (isDefault) {
    lead = (defaults && defaults.lead_s) || 60;
    follow = (defaults && defaults.follow_s) || 30;
  }
  if ((lead === null || lead === undefined) && (follow === null || follow === undefined)) return zh ? "不限时" : "No clock";
  const parts = [];
  if (lead !== null && lead !== undefined) parts.push(zh ? `首出 ${secs(lead)} 秒` : `${secs(lead)} s to lead`);
  if (follow !== null && follow !== undefined) parts.push(zh ? `跟牌 ${secs(follow)} 秒` : `${secs(follow)} s to follow`);
  const line = parts.join(zh ? "、" : ", ");
  return isDefault ? (zh ? `2 人以上：${line}` : `with 2+ people: ${line}`) : line;
}

const RESULT_WORDS = {
  double_down: ["双下", "Double down"],
  single_down: ["单下", "Single down"],
  flat_down: ["平下", "Flat down"],
};
const RESULT_CODES = { "1-2": "double_down", "1-3": "single_down", "1-4": "flat_down" };

/**
 * A deal result in Guandan words (docs/rules.md 1.8, AMB-23): result_code ("double_down" |
 * "single_down" | "flat_down") or the neutral "1-2" / "1-3" / "1-4". Returns "双下" / "Double down
 * (1-2)" ...; an unknown code is returned as given.
 */
export function resultWords(result, lang) {
  const lg = L(lang);
  const code = RESULT_CODES[result] || result;
  const w = RESULT_WORDS[code];
  if (!w) return String(result ?? "");
  const neutral = Object.keys(RESULT_CODES).find((k) => RESULT_CODES[k] === code);
  return lg === "zh" ? w[0] : `${w[1]} (${neutral})`;
}

/**
 * A deal result in words said of the right team (docs/rules.md R34, AMB-23): only 双下 names a team
 * (the one that finished 3rd and 4th), so a 1-2 reads "乙队双下" / "Team B: Double down (1-2)" with
 * ``loser`` the losing team's name; 单下 / 平下 name the result, not a team ("平下" / "Flat down
 * (1-4)": in a 1-4 the last place is on the winning team). Without ``loser`` the plain words.
 */
export function resultPhrase(result, loser, lang) {
  const lg = L(lang);
  const words = resultWords(result, lg);
  if ((RESULT_CODES[result] || result) !== "double_down" || !loser) return words;
  return lg === "zh" ? `${loser}${words}` : `${loser}: ${words}`;
}

const DIFFICULTY_WORDS = {
  easy: ["简单", "Easy"],
  normal: ["普通", "Normal"],
  hard: ["困难", "Hard"],
  expert: ["专家", "Expert"],
  random: ["随机", "Random"],
  // names used by records and rooms made before difficulties existed
  heuristic: ["普通", "Normal"],
};

/** Name of a bot difficulty: "普通" / "Normal" (old implementation names map to their difficulty). */
export function difficultyName(d, lang) {
  const w = DIFFICULTY_WORDS[d];
  if (!w) return L(lang) === "zh" ? "机器人" : "Bot";
  return w[L(lang) === "zh" ? 0 : 1];
}

/** Label of a bot seat with its difficulty: "机器人（普通）" / "Bot (Normal)". */
export function botName(d, lang) {
  const lg = L(lang);
  return lg === "zh" ? `机器人（${difficultyName(d, lg)}）` : `Bot (${difficultyName(d, lg)})`;
}
