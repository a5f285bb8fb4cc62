// Table sounds, synthesised with the Web Audio API (no sound files): your turn, a play, a pass, a
// bomb, a straight flush, the joker bomb and the deal result. A mute switch persists in
// localStorage. Browsers only allow audio after a user gesture; until then sounds are skipped.

const STORAGE_KEY = "guandan.muted";

let ctx = null;
let muted = readMuted();

function readMuted() {
  try {
    return window.localStorage.getItem(STORAGE_KEY) === "1";
  } catch (_e) {
    return false;
  }
}

/** Whether sounds are muted (the persisted switch). */
export function isMuted() {
  return muted;
}

/** Mute or unmute; the choice persists in localStorage ("guandan.muted"). */
export function setMuted(on) {
  muted = Boolean(on);
  try {
    window.localStorage.setItem(STORAGE_KEY, muted ? "1" : "0");
  } catch (_e) {
    // not persisted
  }
}

function audio() {
  if (ctx) return ctx;
  const Ctor = window.AudioContext || window.webkitAudioContext;
  if (!Ctor) return null;
  try {
    ctx = new Ctor();
  } catch (_e) {
    ctx = null;
  }
  return ctx;
}

/** Call from a user gesture (a click): lets the page play sounds from then on. */
export function unlockAudio() {
  const a = audio();
  if (a && a.state === "suspended") a.resume().catch(() => {});
}

/** One enveloped oscillator note: freq Hz, start offset s, duration s, wave type, peak gain. */
function note(a, freq, at, dur, type = "sine", gain = 0.18, slideTo = null) {
  const t0 = a.currentTime + at;
  const osc = a.createOscillator();
  const g = a.createGain();
  osc.type = type;
  osc.frequency.setValueAtTime(freq, t0);
  if (slideTo) osc.frequency.exponentialRampToValueAtTime(slideTo, t0 + dur);
  g.gain.setValueAtTime(0.0001, t0);
  g.gain.exponentialRampToValueAtTime(gain, t0 + 0.012);
  g.gain.exponentialRampToValueAtTime(0.0001, t0 + dur);
  osc.connect(g).connect(a.destination);
  osc.start(t0);
  osc.stop(t0 + dur + 0.02);
}

/** A short burst of filtered noise (the "thump" of a bomb): at s offset, dur s. */
function noise(a, at, dur, gain = 0.35, freq = 900) {
  const len = Math.max(1, Math.floor(a.sampleRate * dur));
  const buf = a.createBuffer(1, len, a.sampleRate);
  const data = buf.getChannelData(0);
  for (let i = 0; i < len; i++) data[i] = (Math.random() * 2 - 1) * (1 - i / len) ** 2;
  const src = a.createBufferSource();
  src.buffer = buf;
  const filter = a.createBiquadFilter();
  filter.type = "lowpass";
  filter.frequency.value = freq;
  const g = a.createGain();
  g.gain.value = gain;
  src.connect(filter).connect(g).connect(a.destination);
  src.start(a.currentTime + at);
}

const SOUNDS = {
  turn: (a) => { note(a, 660, 0, 0.12, "sine", 0.16); note(a, 880, 0.11, 0.16, "sine", 0.16); },
  play: (a) => { noise(a, 0, 0.06, 0.25, 2500); note(a, 320, 0, 0.06, "triangle", 0.1); },
  pass: (a) => { note(a, 300, 0, 0.14, "sine", 0.1, 220); },
  bomb: (a) => { noise(a, 0, 0.45, 0.6, 600); note(a, 110, 0, 0.4, "sawtooth", 0.12, 45); },
  straight_flush: (a) => { [523, 659, 784, 1047].forEach((f, i) => note(a, f, i * 0.06, 0.2, "triangle", 0.14)); noise(a, 0.2, 0.3, 0.35, 800); },
  joker_bomb: (a) => { noise(a, 0, 0.7, 0.7, 500); [392, 523, 659, 784, 1047].forEach((f, i) => note(a, f, 0.05 + i * 0.07, 0.3, "square", 0.07)); },
  win: (a) => { [523, 659, 784, 1047].forEach((f, i) => note(a, f, i * 0.1, 0.25, "triangle", 0.16)); },
  lose: (a) => { [392, 349, 311].forEach((f, i) => note(a, f, i * 0.14, 0.25, "sine", 0.14)); },
  notice: (a) => { note(a, 740, 0, 0.1, "sine", 0.12); },
};

/** Play a named sound ("turn", "play", "pass", "bomb", "straight_flush", "joker_bomb", "win", "lose", "notice") unless muted. */
export function playSound(name) {
  if (muted || !SOUNDS[name]) return;
  const a = audio();
  if (!a || a.state !== "running") return;
  try {
    SOUNDS[name](a);
  } catch (_e) {
    // audio failures never break the table
  }
}
