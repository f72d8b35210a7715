package workfile

import (
	"context"
	"strings"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// Verify tasks of builds before 2026-11-27 wrote their verified pairs and
// group members as Parquet (_work/verified/chunk-C.parquet, rows of
// records.Pair and records.ExactMember). A job such a build ran through
// its verify stage and this one resumes still holds them, and its
// recorded results name them: the readers of verified files read them as
// they are, rather than fail the job for a format it did not choose.

// isLegacyVerified tells a verified file of the earlier, Parquet, format
// by its name.
func isLegacyVerified(info *fileinfo.Info) bool { return strings.HasSuffix(info.Name, ".parquet") }

// legacyPairEnds and legacyMemberEnds are the columns readVerifiedEnds reads of an earlier build's
// file: a pair's documents, or a member's group and document.
type legacyPairEnds struct {
	A int64 `parquet:"a"`
	B int64 `parquet:"b"`
}

type legacyMemberEnds struct {
	Group int64 `parquet:"group"`
	Doc   int64 `parquet:"doc"`
}

// readLegacyEnds is readVerifiedEnds for an earlier build's file.
func readLegacyEnds(ctx context.Context, st storage.Opener, info *fileinfo.Info, magic string, fn func(a, b int64) error) error {
	if magic == VerifiedMembersMagic {
		return pqfile.Stream(ctx, st, info.Name, info, 4096, func(rows []legacyMemberEnds) error {
			for _, r := range rows {
				if err := fn(r.Group, r.Doc); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return pqfile.Stream(ctx, st, info.Name, info, 4096, func(rows []legacyPairEnds) error {
		for _, r := range rows {
			if err := fn(r.A, r.B); err != nil {
				return err
			}
		}
		return nil
	})
}

// readLegacyPairs is readVerifiedPairs for an earlier build's file.
func readLegacyPairs(ctx context.Context, st storage.Opener, info *fileinfo.Info, fn func([]records.Pair) error) error {
	return pqfile.Stream(ctx, st, info.Name, info, 4096, fn)
}

// readLegacyMembers is readVerifiedMembers for an earlier build's file.
func readLegacyMembers(ctx context.Context, st storage.Opener, info *fileinfo.Info, fn func(records.ExactMember) error) error {
	return pqfile.Stream(ctx, st, info.Name, info, 4096, func(rows []records.ExactMember) error {
		for _, r := range rows {
			if err := fn(r); err != nil {
				return err
			}
		}
		return nil
	})
}
