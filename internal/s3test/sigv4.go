package s3test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// s3Error is an S3 error response.
type s3Error struct {
	status    int
	code, msg string
}

func (e *s3Error) write(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(e.status)
	xml.NewEncoder(w).Encode(struct {
		XMLName xml.Name `xml:"Error"`
		Code    string   `xml:"Code"`
		Message string   `xml:"Message"`
	}{Code: e.code, Message: e.msg})
}

func denied(code, msg string) *s3Error { return &s3Error{http.StatusForbidden, code, msg} }

// verifyV4 checks that r carries an AWS Signature Version 4 in its
// Authorization header made with key: the signature of the canonical
// request (method, path as sent, query, the headers it says it signs, the
// payload hash of X-Amz-Content-Sha256) under the key's secret, for the
// date, region and service of its credential scope. The payload itself is
// not hashed (an S3 client may send UNSIGNED-PAYLOAD or a streaming
// marker); presigned URLs and Signature Version 2 are refused, as neardup
// does not use them.
func verifyV4(r *http.Request, key Key) *s3Error {
	auth := r.Header.Get("Authorization")
	alg, params, ok := strings.Cut(auth, " ")
	if !ok || alg != "AWS4-HMAC-SHA256" {
		return denied("AccessDenied", "s3test: no AWS Signature Version 4 in the Authorization header")
	}
	fields := map[string]string{}
	for _, f := range strings.Split(params, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(f), "=")
		fields[k] = v
	}
	cred := strings.Split(fields["Credential"], "/")
	if len(cred) != 5 || cred[4] != "aws4_request" || fields["SignedHeaders"] == "" || fields["Signature"] == "" {
		return denied("AuthorizationHeaderMalformed", "s3test: Authorization "+auth)
	}
	if cred[0] != key.ID {
		return denied("InvalidAccessKeyId", "the access key ID "+cred[0]+" does not exist")
	}
	date := r.Header.Get("X-Amz-Date")
	payload := r.Header.Get("X-Amz-Content-Sha256")
	if date == "" || payload == "" {
		return denied("AccessDenied", "s3test: a signed request needs X-Amz-Date and X-Amz-Content-Sha256")
	}

	var canon strings.Builder
	path, _, _ := strings.Cut(r.RequestURI, "?")
	canon.WriteString(r.Method + "\n" + path + "\n")
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return denied("AccessDenied", "s3test: query: "+err.Error())
	}
	canon.WriteString(strings.ReplaceAll(q.Encode(), "+", "%20") + "\n")
	signed := strings.Split(fields["SignedHeaders"], ";")
	if !slices.IsSorted(signed) || !slices.Contains(signed, "host") {
		return denied("AuthorizationHeaderMalformed", "s3test: SignedHeaders "+fields["SignedHeaders"])
	}
	for _, h := range signed {
		var v string
		switch vs := r.Header.Values(h); {
		case h == "host":
			v = r.Host
		case h == "content-length" && len(vs) == 0:
			v = strconv.FormatInt(r.ContentLength, 10)
		default:
			vs = slices.Clone(vs)
			for i := range vs {
				vs[i] = strings.Join(strings.Fields(vs[i]), " ")
			}
			v = strings.Join(vs, ",")
		}
		canon.WriteString(h + ":" + v + "\n")
	}
	canon.WriteString("\n" + fields["SignedHeaders"] + "\n" + payload)

	sum := sha256.Sum256([]byte(canon.String()))
	scope := strings.Join(cred[1:], "/")
	toSign := "AWS4-HMAC-SHA256\n" + date + "\n" + scope + "\n" + hex.EncodeToString(sum[:])
	k := []byte("AWS4" + key.Secret)
	for _, part := range cred[1:] {
		k = hmacSHA256(k, part)
	}
	want := hex.EncodeToString(hmacSHA256(k, toSign))
	if !hmac.Equal([]byte(want), []byte(fields["Signature"])) {
		return denied("SignatureDoesNotMatch", "the request signature we calculated does not match the signature you provided")
	}
	return nil
}

func hmacSHA256(key []byte, data string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(data))
	return h.Sum(nil)
}
