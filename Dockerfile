# Builds the neardup commands into one small image. The build context has
# no .git, so the revision that --version prints comes from a build
# argument: docker build --build-arg REVISION=$(git rev-parse HEAD) .
# TAGS leaves out object-store drivers (docs/operations.md, "Build tags"):
# --build-arg TAGS=nogcs,noazure for an image that reads and writes S3 only.
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
