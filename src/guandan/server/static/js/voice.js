// Plays called aloud (报牌, issue 25 item 4) and the table's voice / sounds / effects settings.
//
// Each play at the table is said in the player's language with the browser's speech synthesis
// (callout.js builds the words) and written into a polite live region for screen readers. Where the
// browser has no voice for the language, or voice is switched off, the synthesised sounds of
// sound.js play instead. Three switches persist in localStorage: voice ("guandan.voice"), sounds
// (sound.js's "guandan.muted") and effects ("guandan.effects", the animations: bomb flashes, the
// new play's pop, the received cards' pulse); the system's prefers-reduced-motion keeps effects off
// whatever the switch says.

import { getLang } from "./i18n.js";
import { callout } from "./callout.js";
import { isMuted, playSound, setMuted } from "./sound.js";

const VOICE_KEY = "guandan.voice";
const EFFECTS_KEY = "guandan.effects";

function readFlag(key, fallback) {
  try {
    const v = window.localStorage.getItem(key);
    return v === null ? fallback : v === "1";
  } catch (_e) {
    return fallback;
  }
}

function writeFlag(key, on) {
  try {
    window.localStorage.setItem(key, on ? "1" : "0");
  } catch (_e) {
    // not persisted; still switched for this page
  }
}

// Chromium loads its voice list lazily: asking once at load makes it ready by the first play
if (typeof window !== "undefined" && window.speechSynthesis) {
  try {
    window.speechSynthesis.getVoices();
  } catch (_e) {
    // no voices: the sounds play instead
  }
}

let voice = typeof window !== "undefined" ? readFlag(VOICE_KEY, true) : true;
let effects = typeof window !== "undefined" ? readFlag(EFFECTS_KEY, true) : true;

/** Whether plays are called aloud (the persisted switch; on by default). */
export function voiceOn() {
  return voice;
}

/** Switch the voice on or off (persisted). Switching it off also stops what is being said. */
export function setVoiceOn(on) {
  voice = Boolean(on);
  writeFlag(VOICE_KEY, voice);
  if (!voice && typeof window !== "undefined" && window.speechSynthesis) window.speechSynthesis.cancel();
}

/** Whether the system asks for reduced motion (prefers-reduced-motion: reduce). */
export function systemReducedMotion() {
  return Boolean(typeof window !== "undefined" && window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches);
}

/** Whether the effects switch is on (persisted; on by default). Animations also need systemReducedMotion() false. */
export function effectsOn() {
  return effects;
}

/** Switch the effects on or off (persisted); the body's "fx-off" class follows. */
export function setEffectsOn(on) {
  effects = Boolean(on);
  writeFlag(EFFECTS_KEY, effects);
  applyEffectsClass();
}

/** Put the class "fx-off" on the body while effects are off (the CSS then animates nothing). */
export function applyEffectsClass() {
  if (typeof document !== "undefined" && document.body) document.body.classList.toggle("fx-off", !effects);
}

/** Whether the table is silent: no sounds and no voice (the bar's mute button). */
export function silent() {
  return isMuted() && !voice;
}

/** The bar's mute button: silent (sounds and voice off) or both back on; persisted. */
export function setSilent(on) {
  setMuted(on);
  setVoiceOn(!on);
}

/** A voice of the browser for lang ("zh" | "en"), or null when it has none (or no speech synthesis). */
export function voiceFor(lang) {
  const synth = typeof window !== "undefined" ? window.speechSynthesis : null;
  if (!synth || typeof window.SpeechSynthesisUtterance !== "function") return null;
  const prefix = lang === "zh" ? "zh" : "en";
  const voices = synth.getVoices() || [];
  const fits = voices.filter((v) => String(v.lang || "").toLowerCase().replace("_", "-").startsWith(prefix));
  if (!fits.length) return null;
  const region = lang === "zh" ? "zh-cn" : "en-us";
  return fits.find((v) => String(v.lang).toLowerCase().replace("_", "-") === region) || fits[0];
}

/** Say text in lang with the browser's voice; true when it was handed to the synthesiser. */
export function speak(text, lang) {
  const v = voiceFor(lang);
  if (!v || !text) return false;
  const synth = window.speechSynthesis;
  try {
    if (synth.pending) synth.cancel(); // never fall behind the table: drop calls still waiting
    const u = new window.SpeechSynthesisUtterance(text);
    u.voice = v;
    u.lang = v.lang;
    u.rate = 1.15;
    synth.speak(u);
    return true;
  } catch (_e) {
    return false;
  }
}

let live = null;

/** The page's polite live region for screen readers (created once, visually hidden). */
export function liveRegion() {
  if (live && live.isConnected) return live;
  live = document.createElement("div");
  live.className = "sr-only";
  live.setAttribute("aria-live", "polite");
  live.setAttribute("role", "status");
  live.dataset.testid = "call-live";
  document.body.appendChild(live);
  return live;
}

/**
 * Call a play: action [type, rank, cards], left the seat's cards after it (R32: counted aloud at 10
 * or fewer), who the seat's name for screen readers. The words go to the live region; with the
 * voice on they are spoken; else the play's sound plays (a pass, a play; bombs always sound, with
 * the voice too, as their effect). Returns the words ("" for what is not called).
 */
export function callPlay(action, left, who = "") {
  const lang = getLang();
  const words = callout(action, left, lang);
  if (!words) return "";
  if (typeof document !== "undefined") liveRegion().textContent = who ? `${who}: ${words}` : words;
  const spoken = voice && speak(words, lang);
  const type = action[0];
  if (type === "bomb" || type === "straight_flush" || type === "joker_bomb") playSound(type);
  else if (!spoken) playSound(type === "pass" ? "pass" : "play");
  return words;
}
