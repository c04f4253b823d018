// send_email_draft: an email the user's agent drafted, sent only with the human's approval (even in yolo mode).
import { z } from 'zod';
import type { Capability } from '../types.ts';

const Email = z.email().max(320);

/**
 * Executing it is the approval of the draft: delivery is the outbox's (the user's outbox target registered for
 * send_email_draft receives the payload, signed; substrate part 2), so the action's result records what was approved.
 */
export const sendEmailDraft: Capability<{ to: string | string[]; subject: string; body: string; target_role?: string | undefined }> = {
  name: 'send_email_draft',
  payload: z.object({
    to: z.union([Email, z.array(Email).min(1).max(50)]),
    subject: z.string().trim().min(1).max(998),
    body: z.string().min(1).max(200_000),
    target_role: z.string().trim().min(1).max(100).optional(),
  }),
  policy: 'approval_required',
  reversible: false,
  sideEffecting: true,
  async execute(_ctx, p) {
    return { result: { approved: true, to: Array.isArray(p.to) ? p.to : [p.to], subject: p.subject } };
  },
};
