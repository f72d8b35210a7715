# Builds the neardup commands into one small image.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /out/ ./cmd/coordinator ./cmd/worker ./cmd/gencorpus

FROM gcr.io/distroless/static-debian12
COPY --from=build /out/ /usr/local/bin/
ENTRYPOINT ["/usr/local/bin/coordinator"]
