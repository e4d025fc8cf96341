/**
 * YAML exactly as Go's sigs.k8s.io/yaml (go-yaml v2) writes a JSON document, which is how
 * `crossplane render` prints. The `yaml` package writes valid YAML too, but folds long lines,
 * quotes and orders keys differently, and the point of `npm run render` is output that can be
 * diffed byte for byte against the real CLI. Only JSON values occur here: maps, lists,
 * strings, numbers, booleans and null.
 */

const BEST_WIDTH = 80;

/** go-yaml's key order: digit runs compare as numbers, non-letters sort before letters. */
export function compareKeys(a: string, b: string): number {
  const isDigit = (c: string) => c >= "0" && c <= "9";
  const isLetter = (c: string) => /\p{L}/u.test(c);
  const ar = [...a];
  const br = [...b];
  for (let i = 0; i < ar.length && i < br.length; i++) {
    if (ar[i] === br[i]) continue;
    const al = isLetter(ar[i]!);
    const bl = isLetter(br[i]!);
    if (al && bl) return ar[i]! < br[i]! ? -1 : 1;
    if (al || bl) return bl ? -1 : 1;
    let ai: number;
    let bi: number;
    // Compare runs of digits by value, as go-yaml's keyList.Less does.
    for (ai = i; ai > 0 && isDigit(ar[ai - 1]!); ai--);
    let an = 0;
    for (; ai < ar.length && isDigit(ar[ai]!); ai++) an = an * 10 + Number(ar[ai]);
    for (bi = i; bi > 0 && isDigit(br[bi - 1]!); bi--);
    let bn = 0;
    for (; bi < br.length && isDigit(br[bi]!); bi++) bn = bn * 10 + Number(br[bi]);
    if (an !== bn) return an < bn ? -1 : 1;
    return ar[i]! < br[i]! ? -1 : 1;
  }
  return ar.length - br.length;
}

// Strings go-yaml would read back as something other than a string are double-quoted.
const NOT_A_STRING = [
  /^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$/,
  /^(?:~|null|Null|NULL|)$/,
  /^[-+]?(?:0b[01_]+|0[0-7_]*|[1-9][0-9_]*|0x[0-9a-fA-F_]+|[1-9][0-9_]*(?::[0-5]?[0-9])+)$/,
  /^[-+]?(?:\.[0-9]+|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9]+)?$/,
  /^[-+]?\.(?:inf|Inf|INF)$/,
  /^\.(?:nan|NaN|NAN)$/,
  /^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?)?$/,
];

// What go-yaml v2 counts as unprintable: every control character but the line feed (a tab and a
// carriage return included), and the byte-order mark. Such a string is always double-quoted.
const SPECIAL = /[\x00-\x09\x0b-\x1f\x7f-\x9f\ufeff]/;

/** Whether go-yaml's emitter may write the string unquoted in block context. */
function plainAllowed(s: string): boolean {
  if (s.startsWith("---") || s.startsWith("...")) return false;
  if (/^\s|\s$/.test(s) || SPECIAL.test(s)) return false;
  const first = s[0]!;
  const followedBySpace = (i: number) => i + 1 >= s.length || /\s/.test(s[i + 1]!);
  if ("#,[]{}&*!|>'\"%@`".includes(first)) return false;
  if ("?:-".includes(first) && followedBySpace(0)) return false;
  for (let i = 1; i < s.length; i++) {
    if (s[i] === ":" && followedBySpace(i)) return false;
    if (s[i] === "#" && /\s/.test(s[i - 1]!)) return false;
  }
  return true;
}

/** Writes text, breaking at a single space once the line passes 80 columns, as go-yaml does. */
function folded(text: string, column: number, indent: number, open = "", close = ""): string {
  let out = open;
  let col = column + open.length;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    const spaceRun = c === " " && (i === 0 || text[i - 1] !== " ");
    if (spaceRun && col > BEST_WIDTH && i > 0 && i < text.length - 1 && text[i + 1] !== " ") {
      out += `\n${" ".repeat(indent)}`;
      col = indent;
      continue;
    }
    out += c;
    col++;
  }
  return out + close;
}

function doubleQuoted(s: string): string {
  return JSON.stringify(s).replace(/[\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/**
 * A string of several lines as go-yaml writes it: a literal block, unless a line ends in a space
 * or the string does (which a block could not keep). The header says how to read it back: an
 * indentation hint when the first line begins with a space or is empty, `-` without a final line
 * break, `+` with more than one. Its lines sit at `indent`, empty ones without indentation; the
 * final line break is the one that ends the line the block is on.
 */
function literal(s: string, indent: number): string | undefined {
  if (/ \n| $/.test(s)) return undefined;
  const hint = s.startsWith(" ") || s.startsWith("\n") ? "2" : "";
  const chomp = !s.endsWith("\n") ? "-" : s === "\n" || s.endsWith("\n\n") ? "+" : "";
  const lines = (s.endsWith("\n") ? s.slice(0, -1) : s).split("\n");
  return `|${hint}${chomp}\n${lines.map((l) => (l === "" ? "" : `${" ".repeat(indent)}${l}`)).join("\n")}`;
}

function scalar(value: unknown, column: number, indent: number): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "boolean" || typeof value === "number") return String(value);
  const s = String(value);
  if (NOT_A_STRING.some((re) => re.test(s)) || SPECIAL.test(s)) return doubleQuoted(s);
  if (s.includes("\n")) return literal(s, indent) ?? doubleQuoted(s);
  if (plainAllowed(s)) return folded(s, column, indent);
  return folded(s.replace(/'/g, "''"), column, indent, "'", "'");
}

const isMap = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * A block node at `indent`. `inline` means its first line continues one already begun (after
 * "key: " or "- "), at `column`.
 */
function node(value: unknown, indent: number, column: number, inline: boolean): string {
  if (isMap(value)) {
    const keys = Object.keys(value).filter((k) => value[k] !== undefined).sort(compareKeys);
    if (keys.length === 0) return "{}";
    return keys
      .map((k, i) => {
        const prefix = i === 0 && inline ? "" : " ".repeat(indent);
        const key = scalar(k, indent, indent);
        const v = value[k];
        if (isMap(v) && Object.keys(v).length > 0) return `${prefix}${key}:\n${node(v, indent + 2, indent + 2, false)}`;
        // go-yaml writes a list under a key at the key's own indentation.
        if (Array.isArray(v) && v.length > 0) return `${prefix}${key}:\n${node(v, indent, indent, false)}`;
        return `${prefix}${key}: ${node(v, indent + 2, indent + key.length + 2, true)}`;
      })
      .join("\n");
  }
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    return value.map((item, i) => `${i === 0 && inline ? "" : " ".repeat(indent)}- ${node(item, indent + 2, indent + 2, true)}`).join("\n");
  }
  return scalar(value, column, indent);
}

/** One document, as sigs.k8s.io/yaml.Marshal writes it (ending in a newline). */
export function goYAML(value: unknown): string {
  return `${node(value, 0, 0, false)}\n`;
}
