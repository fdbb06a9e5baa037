// The report's cross-highlighting ([Note: the page's contract] in render.py). Plain
// JavaScript, no framework: the page works from file:// with no server.
"use strict";

let byLoc = null; // "file.py:12" -> the elements that came from that line, built on first use

function index() {
  if (byLoc) return byLoc;
  byLoc = new Map();
  for (const el of document.querySelectorAll("[data-locs]")) {
    for (const key of el.dataset.locs.split(" ")) {
      if (!key) continue;
      if (!byLoc.has(key)) byLoc.set(key, []);
      byLoc.get(key).push(el);
    }
  }
  return byLoc;
}

function setLit(elements, on) {
  for (const el of elements) {
    el.classList.toggle("hl", on);
    if (on) {
      const folded = el.closest("details");
      if (folded) folded.open = true;
    }
  }
}

function toggleLine(line) {
  const on = !line.classList.contains("hl");
  line.classList.toggle("hl", on);
  setLit(index().get(line.dataset.loc) || [], on);
}

function toggleKernel(kernel) {
  const on = !kernel.classList.contains("hl");
  const key = kernel.dataset.kernel;
  const graph = kernel.dataset.graph;
  const nodes = new Set(kernel.dataset.nodes.split(" ").filter(Boolean));
  const locs = new Set(kernel.dataset.locs.split(" ").filter(Boolean));
  const lit = [...document.querySelectorAll(`.kernel[data-kernel="${CSS.escape(key)}"]`)];
  for (const box of document.querySelectorAll(`details[data-kernel="${CSS.escape(key)}"]`)) {
    lit.push(...box.querySelectorAll("[data-stage=code]"));
  }
  const stages = new Set([kernel.dataset.part, "joint"]); // the joint names nodes alike
  for (const el of document.querySelectorAll(`[data-graph="${CSS.escape(graph)}"][data-node]`)) {
    if (nodes.has(el.dataset.node) && stages.has(el.dataset.stage)) lit.push(el);
  }
  for (const line of document.querySelectorAll(".src-line")) {
    if (locs.has(line.dataset.loc)) lit.push(line);
  }
  setLit(lit, on);
}

document.addEventListener("click", (event) => {
  const line = event.target.closest(".src-line");
  if (line) {
    toggleLine(line);
    return;
  }
  const kernel = event.target.closest(".kernel");
  if (kernel) {
    if (kernel.tagName === "SUMMARY") event.preventDefault(); // keep it open
    toggleKernel(kernel);
  }
});
