// Social posts: the networks the CRM publishes to and how long a post may be on each (a draft is cut to it, a
// scheduled text is refused over it).
export const NETWORKS = ['linkedin', 'twitter'] as const;
export type Network = (typeof NETWORKS)[number];

export const POST_LIMITS: Readonly<Record<Network, number>> = { linkedin: 3000, twitter: 280 };
