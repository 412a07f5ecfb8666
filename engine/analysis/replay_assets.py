"""The style and the script of the replay page (engine.analysis.replay_page), inline in
every page so that it needs nothing beside it and no network.

The script reads the deal from the page's `deal-data` element: each position as a scene
(engine.scenes), the moves, and the explanation's marks. It draws the scene as cards,
and steps through the positions: buttons, the arrow keys, Home and End, space to play
and pause, the slider, or a click on a move (the position after it). The counter says
where the table is: `as dealt`, `move 12 of 59: s>w2`, or a step of the winning
alternative.
"""

PAGE_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1rem 1.5rem; color: #222;
       background: #f4f1ea; }
h1 { font-size: 1.25rem; margin: 0 0 .2rem; } h2 { font-size: 1rem; margin: 0 0 .5rem; }
#outcome { margin: 0 0 .8rem; color: #444; }
main { display: flex; gap: 1.5rem; align-items: flex-start; }
#board { flex: 1 1 auto; min-width: 0; }
aside { flex: 0 0 15rem; max-height: 80vh; overflow-y: auto; background: #fff;
        border: 1px solid #ccc; border-radius: .4rem; padding: .6rem .8rem; }
#controls { display: flex; gap: .4rem; align-items: center; flex-wrap: wrap; margin-bottom: .8rem; }
#controls button { font-size: 1rem; min-width: 2.4rem; padding: .2rem .5rem; cursor: pointer; }
#slider { flex: 1 1 12rem; }
#counter { font-variant-numeric: tabular-nums; min-width: 14rem; }
#table { background: #2e6b3f; border-radius: .6rem; padding: .8rem; min-height: 12rem; }
.row { display: flex; gap: .5rem; margin-bottom: .8rem; align-items: flex-start; }
.pile { display: flex; flex-direction: column; align-items: center; min-width: 3rem; }
.pile-name, .caption { color: #e8f0e0; font-size: .75rem; }
.cards { display: flex; flex-direction: column; min-height: 4.2rem; }
.card { box-sizing: border-box; width: 3rem; height: 4.2rem; background: #fff;
        border: 1px solid #777; border-radius: .35rem; font-weight: 700;
        box-shadow: 0 1px 2px rgba(0,0,0,.35);
        display: flex; flex-direction: column; padding: .1rem .25rem; line-height: 1.15; }
.card .corner { font-size: .95rem; }
.card .pip { font-size: 1.6rem; text-align: center; }
.card.red { color: #c8102e; } .card.black { color: #111; } .card.joker { color: #6a1b9a; }
.fan .card + .card { margin-top: -2.95rem; }
.empty { box-sizing: border-box; width: 3rem; height: 4.2rem; border-radius: .35rem;
         border: 2px dashed rgba(255,255,255,.45); }
.cell .card, .cell .empty { width: 2.6rem; height: 3.6rem; }
.cell .card .pip { font-size: 1.3rem; }
.cell { min-width: 2.6rem; }
pre.drawing { color: #f4f1ea; margin: 0; }
#note { color: #444; margin: .4rem 0; }
#moves, .alternative { padding-left: 2.4rem; margin: 0; font-family: ui-monospace, monospace; }
#moves li { cursor: pointer; padding: 0 .2rem; }
#moves li.current { background: #ffe08a; }
#moves li.lost > .move { color: #b00020; font-weight: 700; }
.mark { display: block; color: #b00020; font-family: system-ui, sans-serif; font-size: .8rem; }
#moves li.branch { list-style: none; cursor: default; }
.alternative { border-left: 3px solid #2e7d32; margin: .2rem 0 .3rem; padding-left: 2.2rem; }
.alternative li { color: #2e7d32; }
#explain ul { margin: .4rem 0; padding-left: 1.2rem; }
#explain button { margin-top: .3rem; }
"""

PAGE_SCRIPT = r"""
"use strict";
const data = JSON.parse(document.getElementById("deal-data").textContent);
const SUITS = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };
const $ = (id) => document.getElementById(id);
const played = { name: "played", frames: data.frames, moves: data.moves, first: 0 };
const explain = data.explain;
const branches = { played: played };
if (explain && explain.move) {
  branches.alternative = { name: "alternative", frames: explain.alternative_frames,
                           moves: explain.alternative, first: explain.move - 1 };
}
let view = { branch: played, index: 0 };
let timer = null;

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function cardElement(name) {
  if (name === "JK") {
    const joker = element("span", "card joker", "JK");
    joker.dataset.card = name;
    return joker;
  }
  const suit = name[1];
  const red = suit === "D" || suit === "H";
  const card = element("span", "card " + (red ? "red" : "black"));
  card.dataset.card = name;
  card.title = name;
  card.append(element("span", "corner", (name[0] === "T" ? "10" : name[0]) + SUITS[suit]));
  card.append(element("span", "pip", SUITS[suit]));
  return card;
}

function pileElement(pile) {
  const box = element("div", "pile " + pile.show);
  box.dataset.pile = pile.name;
  if (pile.show !== "cell") box.append(element("span", "pile-name", pile.name));
  const cards = element("div", "cards" + (pile.show === "fan" ? " fan" : ""));
  const shown = pile.show === "top" ? pile.cards.slice(-1) : pile.cards;
  if (shown.length === 0) cards.append(element("span", "empty"));
  shown.forEach((name) => cards.append(cardElement(name)));
  box.append(cards);
  if (pile.caption) box.append(element("span", "caption", pile.caption));
  return box;
}

function drawScene(scene) {
  const table = $("table");
  table.replaceChildren();
  if (scene.text !== undefined) {
    table.append(element("pre", "drawing", scene.text));
    $("note").textContent = "";
    return;
  }
  scene.rows.forEach((row) => {
    const line = element("div", "row");
    row.forEach((pile) => line.append(pileElement(pile)));
    table.append(line);
  });
  $("note").textContent = scene.note || "";
}

function counterText(branch, index) {
  if (branch.name === "alternative") {
    const step = index === 0 ? "the position before it" :
      "step " + index + " of " + branch.moves.length + ": " + branch.moves[index - 1];
    return "winning alternative at move " + explain.move + ", " + step;
  }
  if (index === 0) return "as dealt (" + branch.moves.length + " moves)";
  return "move " + index + " of " + branch.moves.length + ": " + branch.moves[index - 1];
}

function show(branch, index) {
  index = Math.max(0, Math.min(index, branch.frames.length - 1));
  view = { branch: branch, index: index };
  drawScene(branch.frames[index]);
  $("counter").textContent = counterText(branch, index);
  $("slider").value = branch === played ? index : branch.first;
  document.querySelectorAll("#moves li.current").forEach((li) => li.classList.remove("current"));
  const selector = branch === played ? '#moves > li[data-index="' + index + '"]'
                                     : '.alternative li[data-index="' + index + '"]';
  const current = document.querySelector(selector);
  if (current) {
    current.classList.add("current");
    current.scrollIntoView({ block: "nearest" });
  }
}

function step(by) { show(view.branch, view.index + by); }

function pause() {
  if (timer !== null) clearInterval(timer);
  timer = null;
  $("play").textContent = "\u25B6 play";
  $("play").setAttribute("aria-pressed", "false");
}

function play() {
  if (view.index >= view.branch.frames.length - 1) show(view.branch, 0);
  $("play").textContent = "\u275A\u275A pause";
  $("play").setAttribute("aria-pressed", "true");
  timer = setInterval(() => {
    if (view.index >= view.branch.frames.length - 1) return pause();
    step(1);
  }, 500);
}

function moveItem(number, move, branch) {
  const li = element("li");
  li.dataset.index = number;
  li.append(element("span", "move", move));
  li.addEventListener("click", (event) => {
    event.stopPropagation();
    pause();
    show(branch, number);
  });
  return li;
}

function listMoves() {
  const list = $("moves");
  const dealt = element("li", "dealt", "as dealt");
  dealt.dataset.index = 0;
  dealt.value = 0;
  dealt.addEventListener("click", () => { pause(); show(played, 0); });
  list.append(dealt);
  played.moves.forEach((move, i) => {
    const li = moveItem(i + 1, move, played);
    li.value = i + 1;
    if (branches.alternative && i + 1 === explain.move) {
      li.classList.add("lost");
      li.append(element("span", "mark",
        "\u25C0 lost the deal: " + explain.alternative[0] + " still wins"));
      const alternative = element("ol", "alternative");
      explain.alternative.forEach((alt, j) =>
        alternative.append(moveItem(j + 1, alt, branches.alternative)));
      const branch = element("li", "branch");
      branch.append(alternative);
      list.append(li, branch);
      return;
    }
    list.append(li);
  });
}

function describeExplanation() {
  if (!explain) return;
  const box = $("explain");
  const lines = element("ul");
  explain.summary.forEach((line) => lines.append(element("li", "", line)));
  box.append(lines);
  if (branches.alternative) {
    const button = element("button", "", "step through the winning alternative");
    button.id = "alternative";
    button.addEventListener("click", () => { pause(); show(branches.alternative, 0); });
    box.append(button);
  }
}

$("outcome").textContent = "outcome: " + data.outcome;
$("slider").max = played.frames.length - 1;
$("slider").addEventListener("input", (event) => {
  pause();
  show(played, Number(event.target.value));
});
$("first").addEventListener("click", () => { pause(); show(view.branch, 0); });
$("back").addEventListener("click", () => { pause(); step(-1); });
$("forward").addEventListener("click", () => { pause(); step(1); });
$("last").addEventListener("click", () => { pause(); show(view.branch, Infinity); });
$("play").addEventListener("click", () => (timer === null ? play() : pause()));
document.addEventListener("keydown", (event) => {
  const keys = { ArrowRight: () => step(1), ArrowLeft: () => step(-1),
                 Home: () => show(view.branch, 0), End: () => show(view.branch, Infinity) };
  if (event.key === " ") { event.preventDefault(); return timer === null ? play() : pause(); }
  if (keys[event.key]) { event.preventDefault(); pause(); keys[event.key](); }
});
listMoves();
describeExplanation();
show(played, 0);
"""
