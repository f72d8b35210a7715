# Builds the neardup commands from source into one small image, FROM
# scratch: the static binaries, CA certificates, a passwd naming the user
# the image runs as (nonroot, 65532) and a /tmp. It needs a registry for
# the golang image; where none is reachable, scripts/build-images builds
# the same image from binaries built outside (Dockerfile.prebuilt). The
# build context has no .git, so the revision that --version prints comes
# from a build argument: docker build --build-arg REVISION=$(git rev-parse HEAD) .
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
RUN sh scripts/image-rootfs /image

# The files below are those Dockerfile.prebuilt's neardup stage copies.
FROM scratch
COPY --from=build /image/rootfs/ /
COPY --from=build --chown=65532:65532 /image/home/ /home/
COPY --from=build /out/ /usr/local/bin/
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/coordinator"]
