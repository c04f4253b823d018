// FairTurns (src/transports/raw/fair-turns.ts) on a fake clock and a hand-run event loop: what starts at once, what
// waits, and in which order the waiting ones start.
import { expect, it } from 'vitest';
import { FairTurns } from '../../src/transports/raw/fair-turns.ts';

/** A clock that moves only when told, and deferred callbacks that run only when the test runs the loop's turn. */
function harness(budgetMs = 2) {
  let clock = 0;
  let deferred: Array<() => void> = [];
  const turns = new FairTurns({ budgetMs, now: () => clock, defer: (callback) => void deferred.push(callback) });
  const order: string[] = [];
  /** A request of `key` that costs `ms` of the event loop when it starts. */
  const request = (key: string, name: string, ms = 0) => turns.run(key, () => {
    order.push(name);
    clock += ms;
  });
  const nextIteration = () => {
    const callbacks = deferred;
    deferred = [];
    for (const callback of callbacks) callback();
  };
  return { request, order, nextIteration, pending: () => deferred.length };
}

it('starts requests at once while the iteration has budget left', () => {
  const h = harness();
  h.request('a', 'a1', 0.5);
  h.request('b', 'b1', 0.5);
  expect(h.order).toEqual(['a1', 'b1']);
});

it('once the budget is spent, the rest wait and then start one app after another, yielding between turns', () => {
  const h = harness();
  h.request('a', 'a1', 2.5); // spends this iteration's budget
  for (const n of [2, 3, 4, 5]) h.request('a', `a${n}`, 1);
  h.request('b', 'b1', 1);
  h.request('c', 'c1', 1);
  expect(h.order).toEqual(['a1']);
  h.nextIteration(); // a turn: 2 ms of budget, one request per app in rotation
  expect(h.order).toEqual(['a1', 'a2', 'b1']);
  expect(h.pending()).toBe(1); // the rest after the event loop's next poll
  h.request('b', 'b2', 1); // arrives meanwhile: waits behind what waits, in b's place in the rotation
  h.nextIteration();
  expect(h.order).toEqual(['a1', 'a2', 'b1', 'c1', 'a3']);
  h.nextIteration();
  expect(h.order).toEqual(['a1', 'a2', 'b1', 'c1', 'a3', 'b2', 'a4']);
  h.nextIteration();
  expect(h.order).toEqual(['a1', 'a2', 'b1', 'c1', 'a3', 'b2', 'a4', 'a5']);
  expect(h.pending()).toBe(0);
});

it('a new iteration has a fresh budget: requests start at once again', () => {
  const h = harness();
  h.request('a', 'a1', 3);
  h.nextIteration();
  h.request('a', 'a2', 1);
  expect(h.order).toEqual(['a1', 'a2']);
});
