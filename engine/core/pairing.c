/* The round-robin schedule (see pairing.h). */
#include "pairing.h"

#include "rng.h"

#include <stdlib.h>

int pairing_steps(int n) {
  return n < 2 ? 0 : (n % 2 ? n : n - 1);
}

int pairing_pairs_per_step(int n) {
  return n < 2 ? 0 : n / 2;
}

int pairing_init(pairing *p, int n, uint64_t seed) {
  p->n = n;
  p->m = n % 2 ? n + 1 : n;
  p->pos = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
  p->at = malloc(sizeof(int) * (size_t)(p->m > 0 ? p->m : 1));
  if (!p->pos || !p->at) {
    pairing_free(p);
    return -1;
  }
  for (int q = 0; q < p->m; q++)
    p->at[q] = q < n ? q : -1;
  uint64_t x = seed;
  for (int i = p->m - 1; i > 0; i--) { /* Fisher-Yates over the positions, the bye included */
    int j = (int)(splitmix64(&x) % (uint64_t)(i + 1)), t = p->at[i];
    p->at[i] = p->at[j];
    p->at[j] = t;
  }
  p->bye = -1;
  for (int q = 0; q < p->m; q++)
    if (p->at[q] >= 0)
      p->pos[p->at[q]] = q;
    else
      p->bye = q;
  return 0;
}

void pairing_free(pairing *p) {
  free(p->pos);
  free(p->at);
  p->pos = p->at = NULL;
}

/* Position q's partner in step s: the last position stays put and meets position s; the others
 * turn around it, q meeting 2s - q (mod m - 1), the positions mirrored about s. */
static int partner_pos(int m, int s, int q) {
  int r = m - 1;
  if (q == r)
    return s;
  if (q == s)
    return r;
  return ((2 * s - q) % r + r) % r;
}

int pairing_partner(const pairing *p, int step, int rank) {
  if (p->m < 2 || rank < 0 || rank >= p->n || step < 0 || step >= p->m - 1)
    return -1;
  return p->at[partner_pos(p->m, step, p->pos[rank])];
}

/* Which pair of step s position q is in: 0 for the pair of the fixed position, else k for the
 * pair (s + k, s - k), counted from either side. */
static int raw_slot(int m, int s, int q) {
  int r = m - 1;
  if (q == r || q == s)
    return 0;
  int k = ((q - s) % r + r) % r;
  return k <= r / 2 ? k : r - k;
}

int pairing_slot(const pairing *p, int step, int rank) {
  if (pairing_partner(p, step, rank) < 0)
    return -1;
  int slot = raw_slot(p->m, step, p->pos[rank]);
  /* The pair holding the bye is not measured: the slots after it move down one, so the
   * measured pairs are numbered 0 .. pairs_per_step - 1. */
  if (p->bye >= 0 && slot > raw_slot(p->m, step, p->bye))
    slot--;
  return slot;
}
