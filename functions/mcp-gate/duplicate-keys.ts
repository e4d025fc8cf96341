// JSON.parse keeps the last of two equal keys without a word, so `{"name":"search","name":"rm"}`
// would be judged by whichever key the judge's parser keeps while another parser downstream may
// keep the other. The gate refuses such bodies outright; this scanner finds them.
//
// It walks text that JSON.parse has already accepted, so it only has to follow the structure, not
// diagnose syntax. Keys are compared decoded (`"n\u0061me"` is `"name"`), as every parser sees them.

/** Where a key first repeats: the key as decoded and the path of the object holding it. */
export interface DuplicateKey {
  readonly key: string;
  readonly path: string;
}

/** Deeper than this is refused rather than walked: the scanner recurses, and MCP needs nothing like it. */
export const MAX_DEPTH = 128;

export class TooDeep extends Error {
  constructor() {
    super(`nested deeper than ${MAX_DEPTH} levels`);
  }
}

/** The first repeated key in `text` (already valid JSON), or undefined. Throws TooDeep past MAX_DEPTH. */
export function findDuplicateKey(text: string): DuplicateKey | undefined {
  let pos = 0;

  const skipSpace = (): void => {
    while (pos < text.length && " \t\n\r".includes(text[pos]!)) pos++;
  };

  /** Reads the string starting at pos (a quote) and returns it decoded. */
  const readString = (): string => {
    const start = pos;
    pos++;
    while (pos < text.length && text[pos] !== '"') pos += text[pos] === "\\" ? 2 : 1;
    pos++;
    // The slice is a complete JSON string literal; JSON.parse decodes its escapes exactly.
    return JSON.parse(text.slice(start, pos)) as string;
  };

  const scanValue = (path: string, depth: number): DuplicateKey | undefined => {
    if (depth > MAX_DEPTH) throw new TooDeep();
    skipSpace();
    const c = text[pos];
    if (c === "{") return scanObject(path, depth);
    if (c === "[") return scanArray(path, depth);
    if (c === '"') {
      readString();
      return undefined;
    }
    // A number, true, false or null: runs to the next delimiter.
    while (pos < text.length && !",]} \t\n\r".includes(text[pos]!)) pos++;
    return undefined;
  };

  const scanObject = (path: string, depth: number): DuplicateKey | undefined => {
    pos++;
    const seen = new Set<string>();
    skipSpace();
    if (text[pos] === "}") {
      pos++;
      return undefined;
    }
    for (;;) {
      skipSpace();
      const key = readString();
      if (seen.has(key)) return { key, path: path === "" ? "(top level)" : path };
      seen.add(key);
      skipSpace();
      pos++; // the colon
      const found = scanValue(path === "" ? key : `${path}.${key}`, depth + 1);
      if (found) return found;
      skipSpace();
      if (text[pos++] === "}") return undefined;
    }
  };

  const scanArray = (path: string, depth: number): DuplicateKey | undefined => {
    pos++;
    skipSpace();
    if (text[pos] === "]") {
      pos++;
      return undefined;
    }
    for (let index = 0; ; index++) {
      const found = scanValue(`${path}[${index}]`, depth + 1);
      if (found) return found;
      skipSpace();
      if (text[pos++] === "]") return undefined;
    }
  };

  return scanValue("", 0);
}
