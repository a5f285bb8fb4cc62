// The drawer's section of voice, sounds and effects (issue 25, item 4): three switches, each
// persisted (voice.js, sound.js): plays called aloud (报牌), the synthesised sounds, the animations.
// It says when the browser has no voice for the page's language (the sounds then play instead) and
// when the system asks for reduced motion (the animations then stay off whatever the switch says).

import { h } from "../dom.js";
import { getLang, t } from "../i18n.js";
import { isMuted, setMuted, unlockAudio } from "../sound.js";
import { effectsOn, setEffectsOn, setVoiceOn, systemReducedMotion, voiceFor, voiceOn } from "../voice.js";

function toggle(testid, label, on, set, store) {
  return h(
    "label",
    { class: "av-toggle" },
    h("input", {
      type: "checkbox", role: "switch", testid, checked: on, "aria-checked": String(on),
      onchange: (ev) => {
        set(ev.target.checked);
        ev.target.setAttribute("aria-checked", String(ev.target.checked));
        unlockAudio();
        store.notify("table"); // the bar's mute button follows
      },
    }),
    h("span", {}, label),
  );
}

/** The section (testid av-settings) with the switches av-voice, av-sounds and av-effects. */
export function avSettings(store) {
  const noVoice = voiceOn() && typeof window !== "undefined" && window.speechSynthesis && window.speechSynthesis.getVoices().length > 0 && !voiceFor(getLang());
  return h(
    "div",
    { class: "drawer-sec av-settings", testid: "av-settings", role: "group", "aria-label": t("av_title") },
    h("div", { class: "info-label" }, t("av_title")),
    toggle("av-voice", t("av_voice"), voiceOn(), setVoiceOn, store),
    toggle("av-sounds", t("av_sounds"), !isMuted(), (on) => setMuted(!on), store),
    toggle("av-effects", t("av_effects"), effectsOn(), setEffectsOn, store),
    noVoice ? h("p", { class: "muted small-note", testid: "av-voice-missing" }, t("av_voice_missing")) : null,
    systemReducedMotion() ? h("p", { class: "muted small-note", testid: "av-reduced-motion" }, t("av_reduced_motion")) : null,
  );
}
