// The page of spandep serve: sends the text to POST /parse and shows each sentence's tree (SVG drawn by the
// server, as `spandep parse --output-format svg` draws it) with a table of its words; downloads ask the server for
// the CoNLL-U or JSON Lines that `spandep parse` writes.
"use strict";

const $ = (id) => document.getElementById(id);
const COLUMNS = [
  ["ID", (s, i) => i + 1], ["FORM", (s, i) => s.tokens[i]], ["LEMMA", (s, i) => s.lemmas[i]],
  ["UPOS", (s, i) => s.upos[i]], ["XPOS", (s, i) => s.xpos[i]], ["FEATS", (s, i) => s.feats[i]],
  ["HEAD", (s, i) => s.heads[i]], ["DEPREL", (s, i) => s.deprels[i]],
  ["P(head)", (s, i) => s.head_probs && s.head_probs[i]], ["P(label)", (s, i) => s.label_probs && s.label_probs[i]],
];
let parsed = null; // the request whose trees are shown: downloads parse the same data with the same options

function request(extra) {
  return { data: $("data").value, model: $("model").value, input: $("input").value, ...extra };
}

async function post(body) {
  const response = await fetch("/parse", {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  });
  const answer = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
  if (!response.ok) {
    const retry = response.headers.get("Retry-After");
    throw new Error(answer.error + (retry ? ` (retry in ${retry} s)` : ""));
  }
  return answer;
}

function cell(tag, text) {
  const element = document.createElement(tag);
  element.textContent = text === null || text === undefined ? "_" : String(text);
  return element;
}

function wordTable(sentence) {
  const table = document.createElement("table");
  const head = table.createTHead().insertRow();
  COLUMNS.forEach(([name]) => head.appendChild(cell("th", name)));
  const body = table.createTBody();
  sentence.tokens.forEach((_, i) => {
    const row = body.insertRow();
    COLUMNS.forEach(([, value]) => row.appendChild(cell("td", value(sentence, i))));
  });
  return table;
}

function figure(sentence, index) {
  const element = document.createElement("figure");
  element.className = "sentence";
  const caption = document.createElement("figcaption");
  caption.appendChild(cell("span", `${index + 1}. ${sentence.text || sentence.tokens.join(" ")}`));
  if (sentence.confidence !== undefined && sentence.confidence !== null) {
    const score = cell("span", `confidence ${sentence.confidence.toFixed(2)}`);
    score.className = "confidence";
    caption.appendChild(score);
  }
  const tree = document.createElement("div");
  tree.className = "tree";
  tree.innerHTML = sentence.svg; // drawn and escaped by the server
  const words = document.createElement("details");
  words.appendChild(cell("summary", `words (${sentence.tokens.length})`));
  words.appendChild(wordTable(sentence));
  element.append(caption, tree, words);
  return element;
}

async function parse(event) {
  event.preventDefault();
  const body = request({ trees: true });
  $("status").textContent = "parsing…";
  $("parse").disabled = true;
  try {
    const answer = await post(body);
    const count = answer.sentences.length;
    $("sentences").replaceChildren(...answer.sentences.map(figure));
    $("status").textContent = `${count} sentence${count === 1 ? "" : "s"} parsed by model ${answer.model}`;
    parsed = body;
    $("downloads").hidden = count === 0;
  } catch (error) {
    $("status").textContent = `error: ${error.message}`;
  } finally {
    $("parse").disabled = false;
  }
}

async function download(event) {
  const format = event.target.dataset.format;
  if (!format || !parsed) return;
  try {
    const answer = await post({ ...parsed, trees: false, output: format });
    const link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob([answer.result], { type: "text/plain;charset=utf-8" }));
    link.download = `parsed.${format}`;
    link.click();
    URL.revokeObjectURL(link.href);
  } catch (error) {
    $("status").textContent = `error: ${error.message}`;
  }
}

async function openFile(event) {
  const file = event.target.files[0];
  if (!file) return;
  $("data").value = await file.text();
  if (/\.conllu?$/i.test(file.name)) $("input").value = "conllu";
}

async function models() {
  const response = await fetch("/models");
  const answer = await response.json();
  for (const name of Object.keys(answer.models)) {
    const option = cell("option", name);
    option.value = name;
    option.selected = name === answer.default_model;
    $("model").appendChild(option);
  }
}

$("request").addEventListener("submit", parse);
$("downloads").addEventListener("click", download);
$("file").addEventListener("change", openFile);
models().catch((error) => { $("status").textContent = `error: cannot list the models (${error.message})`; });
