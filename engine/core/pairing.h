/* Every pair of ranks in rounds of disjoint pairs (the round-robin "circle method" of
 * tournament scheduling, as LinkTest pairs processes: Frings et al., "LinkTest", Jülich).
 * n ranks meet every other rank exactly once in n - 1 steps of n / 2 pairs (n even), or in n
 * steps of (n - 1) / 2 pairs with one rank sitting out each step (n odd).  Positions on the
 * circle are a seeded permutation of the ranks, so which ranks meet in which step changes with
 * the seed (a launch's), while every rank computes the same schedule without communicating.
 * MPI-free, so the schedule is unit-tested (engine/unit/test_core.c). */
#ifndef SCOPE_PAIRING_H
#define SCOPE_PAIRING_H
#include <stdint.h>

typedef struct {
  int n;    /* ranks */
  int m;    /* positions on the circle: n, or n + 1 (a bye) when n is odd */
  int *pos; /* pos[rank]: the rank's position */
  int *at;  /* at[position]: the rank there, -1 for the bye */
  int bye;  /* the bye's position, -1 when n is even */
} pairing;

/* Steps of a full sweep: n - 1 (n even), n (n odd), 0 below 2 ranks. */
int pairing_steps(int n);
/* Pairs measured in one step: n / 2, rounded down. */
int pairing_pairs_per_step(int n);
/* The schedule for n ranks from `seed` (0 on success, -1 out of memory). */
int pairing_init(pairing *p, int n, uint64_t seed);
void pairing_free(pairing *p);
/* The rank's partner in `step`, or -1 when it sits out that step. */
int pairing_partner(const pairing *p, int step, int rank);
/* Which of the step's pairs (0 .. pairs_per_step - 1) the rank is in, the same number for both
 * ranks of a pair; -1 when it sits out.  Pairs measured one at a time go in this order. */
int pairing_slot(const pairing *p, int step, int rank);

#endif
