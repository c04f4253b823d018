import { crc32 } from 'node:zlib';

export interface ZipEntry {
  /** Relative path with `/` separators, already validated (see entrySegments). */
  name: string;
  bytes: Buffer;
}

const UTF8_NAMES = 0x0800;
/** Version made by: Unix (3), spec 2.0; the external attributes then carry the Unix mode. */
const MADE_BY_UNIX = (3 << 8) | 20;
const REGULAR_FILE = 0o100644;
const DOS_DATE_1980 = (0 << 9) | (1 << 5) | 1;

/**
 * A zip of regular files, stored without compression, in memory. It exists so that a deployment given as a map
 * of files takes exactly the path of an uploaded zip (the same extraction, checks and publishing) without a zip
 * library in the runtime dependencies; storing keeps it trivial and its inputs are small (a tool call's body).
 * No zip64: the caller keeps the total far below 4 GB.
 */
export function storedZip(entries: readonly ZipEntry[]): Buffer {
  if (entries.length > 0xffff) throw new Error('a zip without zip64 holds at most 65535 entries');
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    const crc = crc32(entry.bytes);
    const size = entry.bytes.length;

    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed
    local.writeUInt16LE(UTF8_NAMES, 6);
    local.writeUInt16LE(0, 8); // stored
    local.writeUInt16LE(0, 10); // time
    local.writeUInt16LE(DOS_DATE_1980, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(size, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    locals.push(local, name, entry.bytes);

    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(MADE_BY_UNIX, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(UTF8_NAMES, 8);
    central.writeUInt16LE(0, 10);
    central.writeUInt16LE(0, 12);
    central.writeUInt16LE(DOS_DATE_1980, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(size, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt16LE(0, 30); // extra
    central.writeUInt16LE(0, 32); // comment
    central.writeUInt16LE(0, 34); // disk
    central.writeUInt16LE(0, 36); // internal attributes
    central.writeUInt32LE((REGULAR_FILE << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);

    offset += 30 + name.length + size;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}
