// The schema's relationships drawn as inline SVG laid out here (no diagram library): a box per table listing its
// columns, a line per foreign key from the referencing column to the referenced one. Tables are placed in columns by
// how deep their references go (a table referencing nothing on the left, tables referencing it to its right), so most
// lines run right to left without crossing boxes. The same relationships follow as a text list for screen readers.
import { primaryKey, relations, type Relation, type SchemaView } from '../../api/schema.ts';

const BOX_W = 230;
const HEAD_H = 28;
const ROW_H = 20;
const GAP_X = 90;
const GAP_Y = 28;
const PAD = 16;
/** Tables of one depth past this many go to a further column, so the drawing stays wider than tall. */
const PER_COLUMN = 5;
/** Rough glyph widths (px) of the column names (13px) and types (12px), to cut a name before it runs into its type. */
const NAME_CHAR_W = 7.4;
const TYPE_CHAR_W = 6.6;
const TYPE_CHARS = 14;
const LINE = '#1f4fc4';

interface Box {
  name: string;
  x: number;
  y: number;
  columns: string[];
}

/** How many references deep a table is: 0 references nothing else; a cycle counts as 0 where it closes. */
function depths(view: SchemaView, rels: Relation[]): Map<string, number> {
  const out = new Map<string, number>();
  const visit = (t: string, path: Set<string>): number => {
    const known = out.get(t);
    if (known !== undefined) return known;
    if (path.has(t)) return 0;
    path.add(t);
    const targets = rels.filter((r) => r.from === t && r.to !== t && r.to in view.tables).map((r) => visit(r.to, path));
    path.delete(t);
    const d = targets.length ? 1 + Math.max(...targets) : 0;
    out.set(t, d);
    return d;
  };
  for (const t of Object.keys(view.tables)) visit(t, new Set());
  return out;
}

function layout(view: SchemaView, rels: Relation[]): { boxes: Map<string, Box>; width: number; height: number } {
  const depth = depths(view, rels);
  const byDepth = new Map<number, string[]>();
  for (const t of Object.keys(view.tables).sort()) byDepth.set(depth.get(t)!, [...(byDepth.get(depth.get(t)!) ?? []), t]);
  const stacks: string[][] = [];
  for (const d of [...byDepth.keys()].sort((a, b) => a - b)) {
    const names = byDepth.get(d)!;
    for (let i = 0; i < names.length; i += PER_COLUMN) stacks.push(names.slice(i, i + PER_COLUMN));
  }
  const boxes = new Map<string, Box>();
  let height = 0;
  stacks.forEach((stack, col) => {
    let y = PAD;
    for (const name of stack) {
      const columns = Object.keys(view.tables[name]!.columns);
      boxes.set(name, { name, x: PAD + col * (BOX_W + GAP_X), y, columns });
      y += HEAD_H + columns.length * ROW_H + GAP_Y;
    }
    height = Math.max(height, y - GAP_Y + PAD);
  });
  return { boxes, width: PAD * 2 + stacks.length * BOX_W + Math.max(0, stacks.length - 1) * GAP_X, height };
}

const rowY = (box: Box, column: string) => box.y + HEAD_H + Math.max(0, box.columns.indexOf(column)) * ROW_H + ROW_H / 2;
const cut = (s: string, max: number) => (s.length > max ? `${s.slice(0, Math.max(1, max - 1))}…` : s);
/** A column's name cut to the room its type leaves in the box. */
const nameRoom = (type: string) => Math.floor((BOX_W - 26 - Math.min(type.length, TYPE_CHARS) * TYPE_CHAR_W) / NAME_CHAR_W);
export const relationText = (r: Relation) => `${r.from}.${r.fromColumns.join(', ')} → ${r.to}.${r.toColumns.join(', ')}`;

/** A curve from the referencing column's row to the referenced one's, leaving and entering by the facing sides. */
function edgePath(from: Box, to: Box, r: Relation): string {
  const y1 = rowY(from, r.fromColumns[0]!);
  const y2 = rowY(to, r.toColumns[0]!);
  if (from.x === to.x) {
    // Same column (or the table itself): out of the right side and back in.
    const x = from.x + BOX_W;
    const bend = 40 + Math.abs(y2 - y1) / 6;
    return `M${x} ${y1} C${x + bend} ${y1} ${x + bend} ${y2} ${x} ${y2}`;
  }
  const rightward = to.x > from.x;
  const x1 = rightward ? from.x + BOX_W : from.x;
  const x2 = rightward ? to.x : to.x + BOX_W;
  const dx = (rightward ? 1 : -1) * GAP_X * 0.6;
  return `M${x1} ${y1} C${x1 + dx} ${y1} ${x2 - dx} ${y2} ${x2} ${y2}`;
}

function TableBox({ box, view }: { box: Box; view: SchemaView }) {
  const table = view.tables[box.name]!;
  const key = new Set(primaryKey(table));
  return (
    <g class="table" data-table={box.name}>
      <title>{box.name}</title>
      <rect x={box.x} y={box.y} width={BOX_W} height={HEAD_H + box.columns.length * ROW_H} rx="6" fill="#fff" stroke="#8a93a3" />
      <rect x={box.x} y={box.y} width={BOX_W} height={HEAD_H} rx="6" fill="#e6ecfa" stroke="#8a93a3" />
      <text x={box.x + 10} y={box.y + 19} font-weight="700" fill="#1b2230">
        {cut(box.name, Math.floor((BOX_W - 20) / 8.5))}
      </text>
      {box.columns.map((c, i) => (
        <g key={c}>
          <title>{`${c} ${table.columns[c]!.type}`}</title>
          <text x={box.x + 10} y={box.y + HEAD_H + i * ROW_H + 15} font-size="13" fill="#1b2230" font-weight={key.has(c) ? '700' : undefined}>
            {cut(c, nameRoom(table.columns[c]!.type))}
          </text>
          <text x={box.x + BOX_W - 8} y={box.y + HEAD_H + i * ROW_H + 15} font-size="12" fill="#566072" text-anchor="end">
            {cut(table.columns[c]!.type, TYPE_CHARS)}
          </text>
        </g>
      ))}
    </g>
  );
}

export function SchemaDiagram({ view }: { view: SchemaView }) {
  const rels = relations(view).filter((r) => r.to in view.tables);
  const { boxes, width, height } = layout(view, rels);
  const names = Object.keys(view.tables);
  if (names.length === 0) return <p class="muted">No tables yet: apply a schema below.</p>;
  return (
    <>
      <div class="diagram">
        <svg role="img" aria-label={`Diagram of ${names.length} tables and ${rels.length} relationships, listed below`} width={width} height={height} viewBox={`0 0 ${width} ${height}`}>
          <defs>
            <marker id="schema-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse">
              <path d="M0 0 L10 5 L0 10 z" fill={LINE} />
            </marker>
          </defs>
          {/* Lines first: a box hides the stretch of a line behind it rather than the line crossing its text. */}
          {rels.map((r) => (
            <path key={relationText(r)} class="relation" d={edgePath(boxes.get(r.from)!, boxes.get(r.to)!, r)} fill="none" stroke={LINE} stroke-width="1.5" marker-end="url(#schema-arrow)">
              <title>{relationText(r)}</title>
            </path>
          ))}
          {[...boxes.values()].map((b) => (
            <TableBox key={b.name} box={b} view={view} />
          ))}
        </svg>
      </div>
      <h3>Relationships</h3>
      {rels.length === 0 ? (
        <p class="muted">No foreign keys.</p>
      ) : (
        <ul aria-label="Relationships">
          {rels.map((r) => (
            <li key={relationText(r)}>
              <code>{relationText(r)}</code>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
