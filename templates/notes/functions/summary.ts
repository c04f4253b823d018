// GET /fn/summary as a signed-in end user: their notes counted (row-level security keeps it to their own).
export default async (_req: Request, ctx: any) => {
  if (!ctx.user) return Response.json({ error: 'sign in first' }, { status: 401 });
  const { data, error } = await ctx.data.from('notes').select('done');
  if (error) return Response.json({ error: error.message }, { status: 502 });
  const done = data.filter((n: { done: boolean }) => n.done).length;
  return Response.json({ notes: data.length, open: data.length - done, done });
};
