import { z } from 'zod';

export const KeyInfoSchema = z.object({
  id: z.string(),
  name: z.string(),
  hint: z.string().describe('The first characters of the key, to tell keys apart'),
  created_at: z.string(),
});

export const CreatedKeySchema = KeyInfoSchema.extend({
  key: z.string().describe('The secret key. Shown only in this response; it is stored hashed.'),
});

export const KeyNameSchema = z.string().trim().min(1).max(100).default('default');

export const KeyIdSchema = z.string().uuid('key_id is the id returned when the key was created or listed');

export const PublishableKeyValueSchema = z.string().describe('Publishable key (svc_pub_...): not a secret; it acts as an anonymous caller on this app only');

export const PublishableKeySchema = z.object({ id: z.string(), name: z.string(), key: PublishableKeyValueSchema, created_at: z.string() });
