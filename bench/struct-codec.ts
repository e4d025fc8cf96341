// An experiment of the bench, not part of the function: google.protobuf.Struct decoded straight
// into plain JavaScript values and encoded straight from them, in one pass each way.
//
// The SDK's generated codec (ts-proto on @bufbuild/protobuf) builds a FieldsEntry object and a
// six-field Value object for every field of every composed resource, then copies them into
// plain objects (Struct.unwrap); encoding wraps every nested object again and forks a writer
// for each nested message. The profile shows that, and this codec measures what it costs: the
// bench times both on the same bytes (`npm run bench -- --profile`) and checks they agree.
// If the function adopts it, it belongs in functions/ behind the SDK's service definition.

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const f64 = new Float64Array(1);
const f64Bytes = new Uint8Array(f64.buffer);

class Reader {
  pos = 0;
  readonly buf: Buffer;
  constructor(bytes: Uint8Array) {
    this.buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  varint(): number {
    const b = this.buf;
    let x = b[this.pos++]!;
    if (x < 0x80) return x;
    x &= 0x7f;
    let shift = 7;
    for (;;) {
      const c = b[this.pos++]!;
      if (shift < 28) x |= (c & 0x7f) << shift;
      else x += (c & 0x7f) * 2 ** shift;
      if (c < 0x80) return x;
      shift += 7;
      if (shift > 63) throw new Error("varint too long");
    }
  }

  string(len: number): string {
    const start = this.pos;
    this.pos = start + len;
    return this.buf.toString("utf8", start, start + len);
  }

  double(): number {
    const b = this.buf;
    for (let i = 0; i < 8; i++) f64Bytes[i] = b[this.pos + i]!;
    this.pos += 8;
    return f64[0]!;
  }

  skip(wireType: number): void {
    switch (wireType) {
      case 0:
        this.varint();
        return;
      case 1:
        this.pos += 8;
        return;
      case 2:
        this.pos += this.varint();
        return;
      case 5:
        this.pos += 4;
        return;
      default:
        throw new Error(`unsupported wire type ${wireType}`);
    }
  }
}

function readStruct(r: Reader, end: number): Record<string, Json> {
  const out: Record<string, Json> = {};
  while (r.pos < end) {
    const tag = r.varint();
    if (tag !== 10) {
      r.skip(tag & 7);
      continue;
    }
    const entryEnd = r.varint() + r.pos;
    let key = "";
    let value: Json | undefined;
    while (r.pos < entryEnd) {
      const t = r.varint();
      if (t === 10) key = r.string(r.varint());
      else if (t === 18) value = readValue(r, r.varint() + r.pos);
      else r.skip(t & 7);
    }
    if (value !== undefined) out[key] = value;
  }
  return out;
}

function readValue(r: Reader, end: number): Json | undefined {
  let v: Json | undefined;
  while (r.pos < end) {
    const tag = r.varint();
    switch (tag) {
      case 8:
        r.varint();
        v = null;
        break;
      case 17:
        v = r.double();
        break;
      case 26:
        v = r.string(r.varint());
        break;
      case 32:
        v = r.varint() !== 0;
        break;
      case 42:
        v = readStruct(r, r.varint() + r.pos);
        break;
      case 50: {
        const listEnd = r.varint() + r.pos;
        const list: Json[] = [];
        while (r.pos < listEnd) {
          const t = r.varint();
          if (t === 10) list.push(readValue(r, r.varint() + r.pos) as Json);
          else r.skip(t & 7);
        }
        v = list;
        break;
      }
      default:
        r.skip(tag & 7);
    }
  }
  return v;
}

/** A google.protobuf.Struct message, as the plain object Struct.unwrap(Struct.decode(bytes)) gives. */
export function decodeStruct(bytes: Uint8Array): Record<string, Json> {
  const r = new Reader(bytes);
  return readStruct(r, bytes.length);
}

// ---- encoding: sizes first (kept in pre-order), then one write into one buffer ------------

const varintSize = (n: number) => (n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x200000 ? 3 : n < 0x10000000 ? 4 : 5);

function utf8Size(s: string): number {
  const n = s.length;
  for (let i = 0; i < n; i++) if (s.charCodeAt(i) >= 0x80) return Buffer.byteLength(s, "utf8");
  return n;
}

class Sizer {
  sizes: number[] = [];

  struct(o: Record<string, unknown>): number {
    const slot = this.sizes.length;
    this.sizes.push(0);
    let size = 0;
    for (const key in o) {
      const v = o[key];
      if (v === undefined) continue;
      const k = utf8Size(key);
      const entry = 1 + varintSize(k) + k + this.fieldValue(v);
      size += 1 + varintSize(entry) + entry;
    }
    this.sizes[slot] = size;
    return size;
  }

  /** Size of field 2 (the Value) of a map entry, tag included. */
  fieldValue(v: unknown): number {
    const s = this.value(v);
    return 1 + varintSize(s) + s;
  }

  value(v: unknown): number {
    if (v === null) return 2;
    switch (typeof v) {
      case "boolean":
        return 2;
      case "number":
        return 9;
      case "string": {
        const n = utf8Size(v);
        return 1 + varintSize(n) + n;
      }
      case "undefined":
        return 0;
      case "object": {
        if (Array.isArray(v)) {
          const slot = this.sizes.length;
          this.sizes.push(0);
          let size = 0;
          for (const item of v) {
            const s = this.value(item);
            size += 1 + varintSize(s) + s;
          }
          this.sizes[slot] = size;
          return 1 + varintSize(size) + size;
        }
        const s = this.struct(v as Record<string, unknown>);
        return 1 + varintSize(s) + s;
      }
      default:
        throw new Error(`unsupported value type ${typeof v}`);
    }
  }
}

class Writer {
  pos = 0;
  next = 0;
  readonly view: DataView;
  constructor(
    readonly buf: Buffer,
    readonly sizes: number[],
  ) {
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  varint(n: number) {
    while (n >= 0x80) {
      this.buf[this.pos++] = (n & 0x7f) | 0x80;
      n = Math.floor(n / 128);
    }
    this.buf[this.pos++] = n;
  }

  string(s: string) {
    const n = utf8Size(s);
    this.varint(n);
    if (n === s.length && n < 16) {
      for (let i = 0; i < n; i++) this.buf[this.pos++] = s.charCodeAt(i);
    } else this.pos += (this.buf as Buffer & { utf8Write(s: string, offset: number, length: number): number }).utf8Write(s, this.pos, n);
  }

  struct(o: Record<string, unknown>) {
    this.next++; // this struct's own size was used by whoever wrote its length
    for (const key in o) {
      const v = o[key];
      if (v === undefined) continue;
      // The entry's length: recomputed cheaply from the key and the value's size.
      const k = utf8Size(key);
      const mark = this.next;
      const vs = this.peekValue(v, mark);
      const entry = 1 + varintSize(k) + k + 1 + varintSize(vs) + vs;
      this.buf[this.pos++] = 10;
      this.varint(entry);
      this.buf[this.pos++] = 10;
      this.string(key);
      this.buf[this.pos++] = 18;
      this.varint(vs);
      this.value(v);
    }
  }

  /** The encoded size of a Value, using the precomputed size of its struct or list. */
  peekValue(v: unknown, slot: number): number {
    if (v === null || typeof v === "boolean") return 2;
    if (typeof v === "number") return 9;
    if (typeof v === "string") {
      const n = utf8Size(v);
      return 1 + varintSize(n) + n;
    }
    if (v === undefined) return 0;
    const s = this.sizes[slot]!;
    return 1 + varintSize(s) + s;
  }

  value(v: unknown) {
    if (v === null) {
      this.buf[this.pos++] = 8;
      this.buf[this.pos++] = 0;
      return;
    }
    switch (typeof v) {
      case "boolean":
        this.buf[this.pos++] = 32;
        this.buf[this.pos++] = v ? 1 : 0;
        return;
      case "number":
        this.buf[this.pos++] = 17;
        this.view.setFloat64(this.pos, v, true);
        this.pos += 8;
        return;
      case "string":
        this.buf[this.pos++] = 26;
        this.string(v);
        return;
      case "undefined":
        return;
      default:
        if (Array.isArray(v)) {
          const size = this.sizes[this.next++]!;
          this.buf[this.pos++] = 50;
          this.varint(size);
          for (const item of v) {
            this.buf[this.pos++] = 10;
            this.varint(this.peekValue(item, this.next));
            this.value(item);
          }
          return;
        }
        this.buf[this.pos++] = 42;
        this.varint(this.sizes[this.next]!);
        this.struct(v as Record<string, unknown>);
    }
  }
}

/** Encodes a plain object as a google.protobuf.Struct, as Struct.encode(Struct.wrap(o)) does. */
export function encodeStruct(o: Record<string, unknown>): Buffer {
  const sizer = new Sizer();
  const size = sizer.struct(o);
  const w = new Writer(Buffer.allocUnsafe(size), sizer.sizes);
  w.struct(o);
  if (w.pos !== size) throw new Error(`struct codec: wrote ${w.pos} bytes, sized ${size}`);
  return w.buf;
}
