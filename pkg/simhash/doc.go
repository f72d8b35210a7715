// Package simhash computes 64-bit SimHash fingerprints of shingle sets and
// finds the fingerprints within a small Hamming distance of each other.
//
// # Fingerprints
//
// SimHash (Charikar, "Similarity estimation techniques from rounding
// algorithms", STOC 2002) maps a document to f bits such that similar
// documents get fingerprints at a small Hamming distance. Every feature,
// here a 64-bit shingle hash from package shingle (already well mixed, so
// its bits behave as independent fair coins), votes on each of the 64
// output bits: +w when the corresponding bit of its hash is 1, -w when it
// is 0. Bit i of the fingerprint is 1 when the total vote on bit i is
// positive (a tie gives 0). Bit i is thus the sign of the projection of the
// document's feature vector onto a pseudo-random +-1 direction, Charikar's
// random-hyperplane rounding: two documents disagree on a bit with
// probability about theta/pi, theta the angle between their feature
// vectors, independently for the 64 bits.
//
// [Fingerprint] treats its input as a set (w = 1 per distinct shingle);
// [FingerprintWeighted] weighs each distinct shingle by its number of
// occurrences. [Distance] is the Hamming distance.
//
// Both come down to counting, for each of the 64 bit positions, the hashes
// that have that bit set (the vote is positive when the count exceeds half
// the number of votes). The counting is bit-sliced: the 64 counts are held
// as bit planes (plane j holds bit j of all 64 counts), and the hashes are
// added sixteen at a time through a Harley-Seal tree of carry-save adders
// (about 7 word operations per hash, no data-dependent branch), the carry
// out of the tree rippling into the higher planes. The majority test is
// then a bit-sliced comparison of the planes with a constant, so no
// per-bit counter is ever materialised. This costs under a nanosecond per
// shingle, against tens for a loop over the 64 bits of every hash.
//
// Manku, Jain and Das Sarma ("Detecting near-duplicates for web
// crawling", WWW 2007) used 64-bit fingerprints and declared two pages
// near-duplicates at distance k <= 3. The threshold is tight for short
// texts, because each vote is one of n: a one-word edit of a 300-word
// document (5 of its 296 word 5-grams replaced) flips each bit with
// probability 0.057, so the distance is Binomial(64, 0.057), 3.65 on
// average; only half of such edits stay within k = 3, 93% within k = 6.
// The flip probability falls like 1/sqrt(n): for 3000-word documents, 97%
// stay within k = 3. (The model and its check are in stats_test.go.)
//
// For a similarity threshold rather than an edit, [FlipProbability] gives
// the flip probability of two sets of equal size and Jaccard similarity J
// under the random-hyperplane model, [FoundProbability] the probability
// that they are within distance k, and [CandidateProbability] that they
// share a block key. Two sets of equal size at J = 0.8 are 9.7 bits apart
// on average, so k = 3 finds under 1% of such pairs, and half of the pairs
// only from J = 0.97.
//
// # Search by blocks
//
// If two fingerprints differ in at most k bits and the 64 bits are cut into
// k+1 disjoint blocks, at least one block holds none of the differing bits
// (pigeonhole), so the two fingerprints agree exactly on that block.
// [Blocks] cuts the fingerprint into k+1 contiguous blocks and gives one
// key per block; indexing every fingerprint under its k+1 keys and taking
// as candidates the fingerprints that share a key finds every pair within
// distance k, with no false negative. Candidates further apart than k are
// then discarded with [Distance]. This is the basic form of the permuted
// tables of Manku et al.
//
// For random fingerprints, a block of w bits matches with probability
// 2^-w, so a pair becomes a candidate about (k+1) * 2^-(64/(k+1)) times:
// 6e-5 for k = 3, 0.013 for k = 6, 1 for k = 15, where blocks of 4 bits
// make the index as costly as comparing every pair. Hence [MaxK] = 15.
package simhash
