// Every 5 minutes (cron, as the app): finished work-email lookups of every workspace collected into their contacts.
import { handler, json } from '../lib/http.ts';
import { collectLookups } from '../lib/email-lookup.ts';

/** Lookups polled per run (each poll is free); the rest wait for the next run, oldest first. */
const PER_RUN = 200;

export default handler(async (_request, ctx) => json(await collectLookups(ctx, PER_RUN)));
