// POST {company_id}: the company's firmographics (industry, size, location, LinkedIn page) from the people vendor,
// found by its name and domain, recorded on the company and its timeline with the credits it cost.
import { handler, json, body, uuid } from '../lib/http.ts';
import { rowOf } from '../lib/workspace.ts';
import { enrichCompany, type CompanyRow } from '../lib/enrich.ts';

export default handler(async (request, ctx) => {
  const companyId = uuid(await body(request), 'company_id');
  const { row, member } = await rowOf<CompanyRow>(ctx, 'companies', companyId);
  const done = await enrichCompany(ctx, ctx.data, row, { userId: member.user_id });
  return json({ status: done.status, company: done.row, changed: done.changed, credits: done.credits });
});
