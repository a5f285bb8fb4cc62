// Strings of leaving a game and of the table's findings (issue 25, item 9): the drawer's Leave
// button and its confirmation, the seat of a person who left, the failed attempts at the target
// level. i18n.js merges them into its tables. Same format as i18n.js: one `key: "text",` per line,
// identical keys in both tables (tests/test_ui_static.py reads both files).

export const TABLE_EN = {
  leave_game: "Leave the game",
  leave_confirm_title: "Leave this game?",
  leave_confirm_alone: "Nobody else plays at this table: the game ends now, unfinished and unrated (no rating change).",
  leave_confirm_others: "The bot plays your seat for the rest of the game, which goes on and counts as usual. You can come back and take your seat again.",
  leave_confirm_yes: "Leave",
  leave_confirm_no: "Stay",
  leave_done_ended: "You left: the game is over (abandoned, unrated).",
  leave_done_bot: "You left: the bot plays your seat. Open the room again to take it back.",
  seat_left: "left",
  seat_left_title: "Left the game: the bot plays this seat",
  auto_banner_left: "You left this game: the bot plays your seat.",
  rejoin_seat: "Take my seat back",
  notice_auto_on_left: "{who} left the table: the bot plays on.",
  a_fails_at: "Failed attempts at {target}",
  err_not_playing: "No game is being played in this room: it is already over.",
};

export const TABLE_ZH = {
  leave_game: "离开牌桌",
  leave_confirm_title: "确定离开本局吗？",
  leave_confirm_alone: "牌桌上没有其他玩家：离开后本局立即结束，按中止处理，不计输赢，不改等级分。",
  leave_confirm_others: "离开后由机器人替你打完本局，对局照常进行并计分。你可以随时回来收回座位。",
  leave_confirm_yes: "确认离开",
  leave_confirm_no: "继续打",
  leave_done_ended: "你已离开：本局已中止，不计输赢。",
  leave_done_bot: "你已离开：机器人替你出牌。重新打开房间即可收回座位。",
  seat_left: "已离开",
  seat_left_title: "已离开本局：由机器人代打",
  auto_banner_left: "你已离开本局：机器人正在替你出牌。",
  rejoin_seat: "回到座位",
  notice_auto_on_left: "{who}离开了牌桌，由机器人代打。",
  a_fails_at: "打{target}失败次数",
  err_not_playing: "这个房间里没有进行中的对局：对局已经结束。",
};
