// Strings of the installable app, the keyboard and screen-reader table and the plays called aloud
// (issue 25, items 4 and 5): the offline page, the keyboard legend, the aria-labels of cards, seats and
// buttons, and the voice / sounds / effects settings. i18n.js merges them into its tables. Same
// format as i18n.js: one `key: "text",` per line, identical keys in both tables
// (tests/test_ui_static.py reads both files). The spoken phrases themselves sit in callout.js.

export const APP_EN = {
  offline_page_title: "Offline · Guandan",
  offline_title: "You are offline",
  offline_text: "The table needs the server. Try again once you are back online.",
  offline_retry: "Try again",
};

export const APP_ZH = {
  offline_page_title: "离线 · 掼蛋",
  offline_title: "没有网络连接",
  offline_text: "牌桌需要连接服务器，恢复网络后请重试。",
  offline_retry: "重试",
};
