// POST {workspace_id, query? | filters?, page_size?, next_token?, lead_list_id?}: people search by the vendor; each
// result says whether the workspace already has the person (contact_id), and the answer what the page cost.
import { handler, json, body } from '../lib/http.ts';
import { PERSON_FILTERS, chargeList, savedByUrl, searchAnswer, searchInput } from '../lib/leads.ts';
import { contactFields, creditsOf, normalizeUrl, type PersonResult } from '../lib/people.ts';

export default handler(async (request, ctx) => {
  const search = await searchInput(ctx, await body(request), PERSON_FILTERS);
  const answer = await ctx.people.searchPerson(search.request);
  const found = (answer?.data?.results ?? []) as PersonResult[];
  const saved = await savedByUrl(ctx, 'contacts', search.workspaceId, found.map((r) => r.socialProfileUrl));
  await chargeList(ctx, search.leadListId, creditsOf(answer));
  const results = found.map((r) => {
    const fields = contactFields(r.socialProfileUrl, r.profile ?? {});
    return {
      linkedin_url: fields.linkedin_url,
      full_name: fields.full_name,
      title: fields.title,
      company: fields.company_name,
      location: fields.location,
      headline: r.profile?.headline ?? null,
      contact_id: saved.get(normalizeUrl(r.socialProfileUrl)) ?? null,
    };
  });
  return json(searchAnswer(answer, results));
});
