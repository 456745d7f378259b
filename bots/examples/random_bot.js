#!/usr/bin/env node
// A random bot for moska-p2p in JavaScript: the external bot protocol (docs/BOTS.md, "Bots in any
// language") needs nothing but JSON lines on stdin and stdout.
//
//   moska arena --preset moska --bots "exec:node bots/examples/random_bot.js",random,random,random
//
// The seed comes from the first command-line argument, else from the "start" message, so
// games are repeatable.
"use strict";

const readline = require("readline");

// mulberry32: a tiny seeded generator (Math.random cannot be seeded).
function generator(seed) {
  let state = seed >>> 0;
  return function next() {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const fixedSeed = process.argv.length > 2 ? Number(process.argv[2]) : null;
let random = generator(fixedSeed ?? 1);

const input = readline.createInterface({ input: process.stdin, terminal: false });

input.on("line", (line) => {
  if (!line.trim()) return;
  const message = JSON.parse(line);
  if (message.type === "start") {
    if (fixedSeed === null && message.seed != null) {
      random = generator(message.seed * 1000003 + message.game);
    }
  } else if (message.type === "choose") {
    const moves = message.legal_moves;
    const move = moves[Math.floor(random() * moves.length)];
    process.stdout.write(JSON.stringify({ state_id: message.state_id, move: move }) + "\n");
  }
  // "event" and "end" need no answer.
});

// The arena closes our stdin when it is done with us.
input.on("close", () => process.exit(0));
