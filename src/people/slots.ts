// The provider slots (primary, secondary) and the routing setting that sends each action to one of them. A request
// is answered in the spec's 503s when its slot has no provider, or a provider without the action.
import type { PeopleRoute, PeopleRouting, PeopleSlot } from '../config.ts';
import type { PeopleProvider } from './provider.ts';
import { peopleErrors } from './errors.ts';

/**
 * The provider in each slot: the vendor adapters the composition root built from SVC_PEOPLE_<SLOT>_*, so this area
 * knows providers only through the port (provider.ts). Undefined: no provider registered in that slot.
 */
export type PeopleProviders = Readonly<Record<PeopleSlot, PeopleProvider | undefined>>;

/** Where a request goes: the slot (reply header x-people-provider) and what its provider does for the request. */
export interface Routed<M> {
  slot: PeopleSlot;
  provider: PeopleProvider;
  call: M;
}

export class PeopleSlots {
  readonly #providers: PeopleProviders;
  readonly #routing: PeopleRouting;

  constructor(providers: PeopleProviders, routing: PeopleRouting) {
    this.#providers = providers;
    this.#routing = routing;
  }

  /** The slot a route is sent to, whether or not a provider is there (for the headers of early refusals). */
  slotOf(route: PeopleRoute): PeopleSlot {
    return this.#routing[route];
  }

  /** The provider registered in a slot (a callback goes back to the slot that queued the lookup). */
  provider(slot: PeopleSlot): PeopleProvider | undefined {
    return this.#providers[slot];
  }

  /**
   * The slot `route` goes to, and `pick`'s part of its provider (a method, bound). 503 people_unavailable when no slot
   * has a provider, provider_not_registered when this one has none, provider_action_unsupported when `pick` finds
   * nothing in it.
   */
  resolve<M>(route: PeopleRoute, pick: (provider: PeopleProvider) => M | undefined): Routed<M> {
    const slot = this.#routing[route];
    const provider = this.#providers[slot];
    if (!provider) throw this.#providers.primary || this.#providers.secondary ? peopleErrors.notRegistered(slot) : peopleErrors.unavailable(slot);
    const call = pick(provider);
    if (call === undefined) throw peopleErrors.actionUnsupported(slot, route);
    return { slot, provider, call };
  }
}
