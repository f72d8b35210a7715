# Builds the neardup commands into one small image. The build context has
# no .git, so the revision that --version prints comes from a build
# argument: docker build --build-arg REVISION=$(git rev-parse HEAD) .
# TAGS adds object-store drivers (docs/operations.md, "Builds"): the
# default reads and writes S3; --build-arg TAGS=gcs,azure adds gs:// and
# azblob://.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Declared after the download: a RUN after an ARG misses the cache when
# the ARG's value changes, and REVISION changes with every commit.
ARG REVISION=unknown
ARG TAGS=
RUN CGO_ENABLED=0 go build -trimpath -tags=${TAGS} -ldflags=-X=github.com/neardup/neardup/internal/buildinfo.revision=${REVISION} -o /out/ ./cmd/coordinator ./cmd/worker ./cmd/gencorpus

FROM gcr.io/distroless/static-debian12
COPY --from=build /out/ /usr/local/bin/
ENTRYPOINT ["/usr/local/bin/coordinator"]
