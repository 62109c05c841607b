// markdown.js: a small, safe Markdown renderer. It builds DOM nodes
// directly (text only ever through text nodes), so agent output cannot
// inject markup. Supported: paragraphs, headings, emphasis, strong,
// strikethrough, inline code, fenced code blocks, lists (nested by indent),
// blockquotes, horizontal rules, links (http, https and mailto only; others
// stay text) and bare http(s) URLs. Images are shown as their alt text,
// never loaded. Anything else is text.

const SAFE_SCHEMES = new Set(["http:", "https:", "mailto:"]);

// renderMarkdown(text) → a DocumentFragment.
export function renderMarkdown(text) {
  const frag = document.createDocumentFragment();
  const lines = String(text ?? "").replace(/\r\n?/g, "\n").split("\n");
  blocks(lines, frag, 0);
  return frag;
}

function el(tag, cls) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  return e;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})(?:\s+(.*?))?\s*#*\s*$/;
const HR = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}> ?(.*)$/;
const LIST = /^( {0,12})([-*+]|\d{1,9}[.)])\s+(.*)$/;

function blocks(lines, parent, depth) {
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) { i++; continue; }

    let m = FENCE.exec(line);
    if (m) {
      const fence = m[1];
      const code = [];
      i++;
      while (i < lines.length) {
        const l = lines[i];
        const close = l.trim();
        if (close.startsWith(fence[0].repeat(fence.length)) && /^[`~]+$/.test(close)) { i++; break; }
        code.push(l);
        i++;
      }
      const pre = el("pre", "md-code");
      const c = el("code");
      if (m[2]) c.dataset.lang = m[2].slice(0, 40);
      c.textContent = code.join("\n");
      pre.appendChild(c);
      parent.appendChild(pre);
      continue;
    }

    m = HEADING.exec(line);
    if (m) {
      const hx = el("h" + Math.min(6, m[1].length + 2), "md-h");
      hx.dataset.level = String(m[1].length);
      inline(m[2] || "", hx);
      parent.appendChild(hx);
      i++;
      continue;
    }

    if (HR.test(line)) { parent.appendChild(el("hr")); i++; continue; }

    if (QUOTE.test(line) && depth < 8) {
      const inner = [];
      while (i < lines.length && lines[i].trim() && (m = QUOTE.exec(lines[i]))) { inner.push(m[1]); i++; }
      const q = el("blockquote");
      blocks(inner, q, depth + 1);
      parent.appendChild(q);
      continue;
    }

    m = LIST.exec(line);
    if (m && depth < 8) {
      i = list(lines, i, parent, depth);
      continue;
    }

    // A paragraph: lines up to a blank line or the start of another block.
    const para = [];
    while (i < lines.length) {
      const l = lines[i];
      if (!l.trim()) break;
      if (para.length && (FENCE.test(l) || HEADING.test(l) || HR.test(l) || QUOTE.test(l) || LIST.test(l))) break;
      para.push(l.trim());
      i++;
    }
    const p = el("p");
    inline(para.join("\n"), p);
    parent.appendChild(p);
  }
}

// A list starting at lines[i]; returns the index after it.
function list(lines, i, parent, depth) {
  const first = LIST.exec(lines[i]);
  const indent = first[1].length;
  const ordered = /\d/.test(first[2]);
  const listEl = el(ordered ? "ol" : "ul");
  if (ordered) {
    const start = parseInt(first[2], 10);
    if (start !== 1 && Number.isFinite(start)) listEl.start = start;
  }
  let items = 0;
  while (i < lines.length) {
    const m = LIST.exec(lines[i]);
    if (!m || m[1].length !== indent || /\d/.test(m[2]) !== ordered) {
      if (m && m[1].length < indent) break;
      if (!m) {
        // A blank line followed by a further item of this list continues it.
        if (!lines[i].trim() && i + 1 < lines.length) {
          const next = LIST.exec(lines[i + 1]);
          if (next && next[1].length === indent) { i++; continue; }
        }
        break;
      }
      if (m[1].length === indent) break;  // other kind of list at the same level
    }
    // One item: its first line and the lines indented under it.
    const body = [m[3]];
    i++;
    while (i < lines.length) {
      const l = lines[i];
      if (!l.trim()) {
        const next = lines[i + 1];
        if (next !== undefined && leading(next) > indent && next.trim()) { body.push(""); i++; continue; }
        break;
      }
      const lm = LIST.exec(l);
      if (lm && lm[1].length <= indent) break;
      if (!lm && leading(l) <= indent && (FENCE.test(l) || HEADING.test(l) || QUOTE.test(l))) break;
      body.push(l.slice(Math.min(leading(l), indent + 2)));
      i++;
    }
    const li = el("li");
    if (body.length === 1) inline(body[0], li);
    else blocks(body, li, depth + 1);
    // A tight item holding just one paragraph reads better without the <p>.
    if (li.childNodes.length === 1 && li.firstChild.nodeName === "P") {
      const p = li.firstChild;
      while (p.firstChild) li.appendChild(p.firstChild);
      li.removeChild(p);
    }
    listEl.appendChild(li);
    items++;
  }
  if (items) parent.appendChild(listEl);
  return i;
}

function leading(s) {
  const m = /^ */.exec(s);
  return m ? m[0].length : 0;
}

const PUNCT = "\\`*_{}[]()#+-.!>~|\"'<:;,?/=@&$%^";

// Inline Markdown of `text` appended to `parent`.
export function inline(text, parent, depth = 0) {
  let buf = "";
  const flush = () => {
    if (buf) { parent.appendChild(document.createTextNode(buf)); buf = ""; }
  };
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text[i];

    if (c === "\\" && i + 1 < n && PUNCT.includes(text[i + 1])) { buf += text[i + 1]; i += 2; continue; }

    if (c === "`") {
      let run = 1;
      while (text[i + run] === "`") run++;
      const marker = "`".repeat(run);
      let j = text.indexOf(marker, i + run);
      while (j !== -1 && text[j + run] === "`") j = text.indexOf(marker, j + run + 1);
      if (j !== -1) {
        flush();
        const code = el("code");
        let inner = text.slice(i + run, j);
        if (inner.length > 2 && inner.startsWith(" ") && inner.endsWith(" ")) inner = inner.slice(1, -1);
        code.textContent = inner;
        parent.appendChild(code);
        i = j + run;
        continue;
      }
      buf += marker;
      i += run;
      continue;
    }

    if ((c === "[" || (c === "!" && text[i + 1] === "[")) && depth < 6) {
      const image = c === "!";
      const link = parseLink(text, image ? i + 1 : i);
      if (link) {
        const raw = text.slice(i, link.end);
        const url = image ? null : safeUrl(link.url);
        if (image) {
          // Never load remote images: show the alt text.
          flush();
          const alt = el("span", "md-image");
          alt.textContent = link.label ? `[image: ${link.label}]` : "[image]";
          alt.title = link.url;
          parent.appendChild(alt);
        } else if (url) {
          flush();
          const a = el("a");
          a.href = url;
          a.rel = "noopener noreferrer";
          a.target = "_blank";
          inline(link.label, a, depth + 1);
          parent.appendChild(a);
        } else {
          buf += raw;  // a link to anything else stays text, as written
        }
        i = link.end;
        continue;
      }
    }

    if (c === "<") {
      const m = /^<((?:https?:\/\/|mailto:)[^\s<>]+)>/i.exec(text.slice(i, i + 2048));
      if (m) {
        const url = safeUrl(m[1]);
        if (url) {
          flush();
          parent.appendChild(anchor(url, m[1]));
          i += m[0].length;
          continue;
        }
      }
    }

    if ((c === "h" || c === "H") && (i === 0 || /[\s(]/.test(text[i - 1]))) {
      const m = /^https?:\/\/[^\s<>"'`]+/i.exec(text.slice(i, i + 2048));
      if (m) {
        let u = m[0];
        while (/[.,;:!?)\]}*_]$/.test(u)) u = u.slice(0, -1);
        const url = safeUrl(u);
        if (url && u.length > 8) {
          flush();
          parent.appendChild(anchor(url, u));
          i += u.length;
          continue;
        }
      }
    }

    if ((c === "*" || c === "_" || c === "~") && depth < 6) {
      let run = 1;
      while (text[i + run] === c) run++;
      const prev = i > 0 ? text[i - 1] : " ";
      const next = text[i + run] ?? " ";
      const opens = !/\s/.test(next) && (c !== "_" || !/[A-Za-z0-9]/.test(prev));
      if (opens && (c !== "~" || run === 2) && run <= 3) {
        const close = findClose(text, i + run, c, run);
        if (close !== -1) {
          flush();
          let node;
          if (c === "~") node = el("del");
          else if (run === 1) node = el("em");
          else if (run === 2) node = el("strong");
          else { node = el("strong"); const em = el("em"); node.appendChild(em); }
          inline(text.slice(i + run, close), node.firstChild || node, depth + 1);
          parent.appendChild(node);
          i = close + run;
          continue;
        }
      }
      buf += c.repeat(run);
      i += run;
      continue;
    }

    buf += c;
    i++;
  }
  flush();
}

function anchor(url, label) {
  const a = el("a");
  a.href = url;
  a.rel = "noopener noreferrer";
  a.target = "_blank";
  a.textContent = label;
  return a;
}

// The closing delimiter run (exactly `run` of `c`, not after a space).
function findClose(text, from, c, run) {
  const marker = c.repeat(run);
  let j = text.indexOf(marker, from + 1);
  while (j !== -1) {
    const before = text[j - 1];
    const after = text[j + run];
    const exact = after !== c && text[j - 1] !== c;
    const wordOk = c !== "_" || !/[A-Za-z0-9]/.test(after ?? " ");
    if (exact && !/\s/.test(before) && wordOk) return j;
    j = text.indexOf(marker, j + 1);
  }
  return -1;
}

// [label](url "title") at text[i] === "[": {label, url, end} or null.
function parseLink(text, i) {
  let depth = 0, j = i;
  for (; j < text.length; j++) {
    const ch = text[j];
    if (ch === "\\") { j++; continue; }
    if (ch === "[") depth++;
    else if (ch === "]") { depth--; if (depth === 0) break; }
    if (j - i > 1000) return null;
  }
  if (j >= text.length || text[j + 1] !== "(") return null;
  const labelEnd = j;
  let k = j + 2, parens = 0;
  for (; k < text.length; k++) {
    const ch = text[k];
    if (ch === "\\") { k++; continue; }
    if (ch === "(") parens++;
    else if (ch === ")") { if (parens === 0) break; parens--; }
    else if (ch === "\n") return null;
    if (k - j > 2048) return null;
  }
  if (k >= text.length) return null;
  let target = text.slice(j + 2, k).trim();
  const titled = /^(\S+)\s+["'(].*["')]$/.exec(target);
  if (titled) target = titled[1];
  if (target.startsWith("<") && target.endsWith(">")) target = target.slice(1, -1);
  return { label: text.slice(i + 1, labelEnd), url: target, end: k + 1 };
}

// The URL when it is absolute and http, https or mailto; else null.
export function safeUrl(raw) {
  const s = String(raw || "").trim();
  // Control characters and spaces are how scheme checks get fooled: refuse them.
  if (!s || /[\u0000-\u0020\u007f]/.test(s)) return null;
  if (!/^(https?:\/\/|mailto:)/i.test(s)) return null;
  let u;
  try { u = new URL(s); } catch { return null; }
  return SAFE_SCHEMES.has(u.protocol) ? u.href : null;
}
