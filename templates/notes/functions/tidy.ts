// Daily, as the app: notes marked done more than KEEP_DONE_DAYS days ago are deleted.
export default async (req: Request, ctx: any) => {
  const { scheduled_at } = await req.json();
  const days = Number(ctx.env.KEEP_DONE_DAYS ?? '7');
  const before = new Date(Date.parse(scheduled_at) - days * 86_400_000).toISOString();
  const { data, error } = await ctx.data.from('notes').delete('done=is.true&done_at=lt.' + encodeURIComponent(before));
  return Response.json({ deleted: data?.length ?? 0, error });
};
