// Table sounds, made with WebAudio oscillators (no sound files): your turn, a claim you
// can make, a win. Muted or not is remembered in localStorage. Every cue is also noted in
// `window.kalaro.sounds` (with whether it was muted), for the console and the tests.

const KEY = "kalaro.muted";

// name -> notes [frequency Hz, start s, length s]
const TUNES = {
  turn: [[660, 0, 0.12], [880, 0.13, 0.16]],
  claim: [[523, 0, 0.1], [659, 0.1, 0.1], [784, 0.2, 0.18]],
  win: [[523, 0, 0.14], [659, 0.14, 0.14], [784, 0.28, 0.14], [1047, 0.42, 0.4]],
};

let ctx = null;

export function isMuted() {
  try {
    return localStorage.getItem(KEY) === "1";
  } catch {
    return false;
  }
}

export function setMuted(muted) {
  try {
    localStorage.setItem(KEY, muted ? "1" : "0");
  } catch { /* private mode: not remembered */ }
}

function audio() {
  const Ctx = window.AudioContext || window.webkitAudioContext;
  if (!Ctx) return null;
  if (!ctx) ctx = new Ctx();
  if (ctx.state === "suspended") ctx.resume().catch(() => {});
  return ctx;
}

/** Browsers start audio only after a gesture: the first tap on the page unlocks it. */
export function unlockOnGesture() {
  const unlock = () => {
    if (!isMuted()) audio();
    window.removeEventListener("pointerdown", unlock);
    window.removeEventListener("keydown", unlock);
  };
  window.addEventListener("pointerdown", unlock);
  window.addEventListener("keydown", unlock);
}

export function play(name) {
  const muted = isMuted();
  window.kalaro = window.kalaro || {};
  (window.kalaro.sounds = window.kalaro.sounds || []).push({ name, muted, at: Date.now() });
  if (muted || !TUNES[name]) return;
  let ac;
  try {
    ac = audio();
  } catch {
    return;
  }
  if (!ac) return;
  const t0 = ac.currentTime + 0.02;
  for (const [freq, start, len] of TUNES[name]) {
    const osc = ac.createOscillator();
    const gain = ac.createGain();
    osc.type = name === "win" ? "triangle" : "sine";
    osc.frequency.value = freq;
    gain.gain.setValueAtTime(0.0001, t0 + start);
    gain.gain.exponentialRampToValueAtTime(0.18, t0 + start + 0.02);
    gain.gain.exponentialRampToValueAtTime(0.0001, t0 + start + len);
    osc.connect(gain).connect(ac.destination);
    osc.start(t0 + start);
    osc.stop(t0 + start + len + 0.05);
  }
}
