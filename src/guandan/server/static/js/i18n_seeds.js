// Strings of what the seeds' platforms show at the table (issue 25 item 6: the anti-tribute jokers
// shown, the turned card of R51, the Yangzhou streaks in the deal result) and of the house modes
// (item 7: 不洗牌 and 单局 in the create-room form), English and Chinese; i18n.js merges them into its
// tables. Same format as i18n.js: one `key: "text",` per line, identical keys in both tables
// (tests/test_ui_static.py reads both files).

export const SEEDS_EN = {
  sd_and: " and ",
  sd_jokers_title: "Anti-tribute!",
  sd_jokers_text: "{seats} show both big jokers: no tribute this deal.",
  sd_turned_title: "Turned card",
  sd_turned_text: "{card} was turned face up: {name} holds it and leads.",
  sd_turned_you: "{card} was turned face up: you hold it and lead.",
  sd_streak_bonus_one: "{name} has been first out {n} deals running: 1 extra level for {team}.",
  sd_streak_bonus_n: "{name} has been first out {n} deals running: {k} extra levels for {team}.",
  sd_streak_penalty_one: "{name} has been last {n} deals running: 1 level off for {team}.",
  sd_streak_penalty_n: "{name} has been last {n} deals running: {k} levels off for {team}.",
  sd_house_modes: "House modes",
  sd_no_shuffle: "No shuffle",
  sd_no_shuffle_hint: "Each later deal is the previous deal's tricks gathered, cut and dealt in packets of 9: combinations stay together and bombs come about twice as often.",
  sd_single_deal: "Single deal",
  sd_single_deal_hint: "A quick game: one deal at a random level; whoever wins it wins the game.",
};

export const SEEDS_ZH = {
  sd_and: "和",
  sd_jokers_title: "抗贡！",
  sd_jokers_text: "{seats} 亮出两张大王，本局免贡。",
  sd_turned_title: "翻牌",
  sd_turned_text: "翻出 {card}，在 {name} 手里，由 {name} 先出。",
  sd_turned_you: "翻出 {card}，在你手里，由你先出。",
  sd_streak_bonus_one: "{name}已连续 {n} 局头游：{team}多升 1 级。",
  sd_streak_bonus_n: "{name}已连续 {n} 局头游：{team}多升 {k} 级。",
  sd_streak_penalty_one: "{name}已连续 {n} 局末游：{team}降 1 级。",
  sd_streak_penalty_n: "{name}已连续 {n} 局末游：{team}降 {k} 级。",
  sd_house_modes: "房规",
  sd_no_shuffle: "不洗牌",
  sd_no_shuffle_hint: "从第二局起，把上一局打出的牌按出牌顺序一轮一轮收起，切牌后每人每次发 9 张：牌型不散，炸弹约多一倍。",
  sd_single_deal: "单局",
  sd_single_deal_hint: "快速玩法：只打一局，级数随机，赢这一局即获胜。",
};
