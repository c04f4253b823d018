// Form readings the Functions and Sites tabs share: name/value lines and a file picker's file.

/** Lines of `name<sep>value` (headers, variables) as a map; a line without the separator is an error the person sees. */
export function pairLines(raw: string | undefined, sep: string, what: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of (raw ?? '').split('\n').filter((l) => l.trim())) {
    const at = line.indexOf(sep);
    if (at < 1) throw new Error(`A ${what} is "name${sep}value"; this line is not: ${line}`);
    out[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return out;
}

/** The file a form's file input holds, if any. */
export function fileOf(data: FormData, name: string): File | undefined {
  const f = data.get(name);
  return f instanceof File && f.name ? f : undefined;
}
