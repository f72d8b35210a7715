package workfile

import (
	"context"
	"strings"

	"github.com/neardup/neardup/internal/fileinfo"
	"github.com/neardup/neardup/internal/pqfile"
	"github.com/neardup/neardup/internal/storage"
	"github.com/neardup/neardup/pkg/records"
)

// The readers of verified files read those of builds before 2026-11-27,
// Parquet files (see the package doc), with these.

// isLegacyVerified tells a verified file of the earlier, Parquet, format
// by its name.
func isLegacyVerified(info *fileinfo.Info) bool { return strings.HasSuffix(info.Name, ".parquet") }

// legacyPairEnds and legacyMemberEnds are the columns ReadVerifiedEnds
// reads of an earlier build's file: a pair's documents, or a member's
// group and document.
type legacyPairEnds struct {
	A int64 `parquet:"a"`
	B int64 `parquet:"b"`
}

type legacyMemberEnds struct {
	Group int64 `parquet:"group"`
	Doc   int64 `parquet:"doc"`
}

// readLegacyEnds is ReadVerifiedEnds for an earlier build's file.
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

// readLegacyPairs is ReadVerifiedPairs for an earlier build's file.
func readLegacyPairs(ctx context.Context, st storage.Opener, info *fileinfo.Info, fn func([]records.Pair) error) error {
	return pqfile.Stream(ctx, st, info.Name, info, 4096, fn)
}

// readLegacyMembers is ReadVerifiedMembers for an earlier build's file.
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
