// The sign-in form: log in, register or play as guest (POST /api/login, /api/register, /api/guest).

import { h, toast } from "./dom.js";
import { errorText, post } from "./api.js";
import { t } from "./i18n.js";

/**
 * Message of an API error for a toast, in the page's language: the translation of the error's
 * code with its params (api.js errorText); a network failure gives the network error; an error
 * without a known code gives the generic message (never the server's English text).
 */
export function errText(e) {
  if (!e) return t("error_generic");
  if (e.status === 0 || e.message === "network") return t("error_network");
  return errorText(e.code, e.params);
}

/**
 * The sign-in form element. onUser(user) is called after a successful log in, registration or
 * guest sign-in.
 */
export function authForm(onUser) {
  const name = h("input", { type: "text", name: "name", autocomplete: "username", maxlength: "24", testid: "login-name", required: true });
  const password = h("input", { type: "password", name: "password", autocomplete: "current-password", testid: "login-password" });
  let busy = false;

  async function go(kind) {
    if (busy) return;
    const body = kind === "guest" ? {} : { name: name.value.trim(), password: password.value };
    if (kind !== "guest" && (!body.name || !body.password)) {
      toast(t("login_need_fields"));
      return;
    }
    busy = true;
    try {
      const data = await post(`/api/${kind}`, body);
      if (data && data.user) {
        password.value = ""; // a form kept by the page (dom.keptForm) must not hold it on
        onUser(data.user);
      } else toast(t("error_generic"));
    } catch (e) {
      toast(errText(e));
    } finally {
      busy = false;
    }
  }

  const form = h(
    "form",
    { class: "card-panel auth-form", testid: "login-form", onsubmit: (ev) => { ev.preventDefault(); go("login"); } },
    h("h2", {}, t("login_title")),
    h("label", {}, h("span", {}, t("login_name")), name),
    h("label", {}, h("span", {}, t("login_password")), password),
    h("p", { class: "hint" }, t("login_hint")),
    h(
      "div",
      { class: "btn-row" },
      h("button", { type: "submit", class: "btn primary", testid: "login-btn" }, t("login_button")),
      h("button", { type: "button", class: "btn", testid: "register-btn", onclick: () => go("register") }, t("register_button")),
    ),
    h("div", { class: "btn-row" }, h("button", { type: "button", class: "btn secondary wide", testid: "guest-btn", onclick: () => go("guest") }, t("guest_button"))),
  );
  return form;
}
