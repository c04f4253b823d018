// POST {workspace_id, query? | filters?, page_size?, next_token?, lead_list_id?}: company search by the vendor; each
// result says whether the workspace already has the company (company_id), and the answer what the page cost.
import { handler, json, body } from '../lib/http.ts';
import { COMPANY_FILTERS, chargeList, savedByUrl, searchAnswer, searchInput } from '../lib/leads.ts';
import { companyFields, creditsOf, normalizeUrl, type CompanyResult } from '../lib/people.ts';

export default handler(async (request, ctx) => {
  const search = await searchInput(ctx, await body(request), COMPANY_FILTERS);
  const answer = await ctx.people.searchCompany(search.request);
  const found = (answer?.data?.results ?? []) as CompanyResult[];
  const saved = await savedByUrl(ctx, 'companies', search.workspaceId, found.map((r) => r.socialUrl));
  await chargeList(ctx, search.leadListId, creditsOf(answer));
  const results = found.map((r) => ({
    ...companyFields(r),
    employee_count: r.employeeCount ?? null,
    company_id: saved.get(normalizeUrl(r.socialUrl)) ?? null,
  }));
  return json(searchAnswer(answer, results));
});
