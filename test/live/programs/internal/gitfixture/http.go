package gitfixture

import (
	"bytes"
	"compress/gzip"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/pktline"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/sideband"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/server"
)

const (
	uploadPackService  = "git-upload-pack"
	receivePackService = "git-receive-pack"

	// maxRequestBody bounds an upload-pack request. A clone of the fixture
	// sends a few hundred bytes; this only stops a runaway client.
	maxRequestBody = 1 << 20
)

// Handler serves the fixture over git's smart HTTP protocol, read-only.
type Handler struct {
	token     []byte
	repo      *Repository
	transport transport.Transport
	logger    *log.Logger
}

// NewHandler returns a handler serving repo at RepoPath. Every request must
// carry HTTP basic auth whose password is token (any username, as with
// GitHub's "x-access-token"). token must not be empty: an empty token would
// make the "authentication required" checks in the live tests meaningless.
// Each request is logged to logger (method, path, status, authorised); the
// token never is.
func NewHandler(repo *Repository, token string, logger *log.Logger) (*Handler, error) {
	if token == "" {
		return nil, errors.New("fixture token is empty; refusing to serve without authentication")
	}
	if logger == nil {
		logger = log.New(io.Discard, "", 0)
	}
	return &Handler{
		token:     []byte(token),
		repo:      repo,
		transport: server.NewServer(storageLoader{repo.Storage}),
		logger:    logger,
	}, nil
}

// storageLoader hands go-git's server the one in-memory repository; routing
// by URL path is done by the handler, so the endpoint is not consulted.
type storageLoader struct{ sto storer.Storer }

func (l storageLoader) Load(*transport.Endpoint) (storer.Storer, error) { return l.sto, nil }

// statusRecorder remembers the status code for the request log.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	authorised := h.authorised(r)
	defer func() {
		h.logger.Printf("method=%s path=%q service=%q status=%d authorised=%t",
			r.Method, r.URL.Path, r.URL.Query().Get("service"), rec.status, authorised)
	}()

	if !authorised {
		rec.Header().Set("WWW-Authenticate", `Basic realm="fixture"`)
		http.Error(rec, "authentication required", http.StatusUnauthorized)
		return
	}

	switch r.URL.Path {
	case RepoPath + "/info/refs":
		if r.Method != http.MethodGet {
			http.Error(rec, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h.infoRefs(rec, r)
	case RepoPath + "/" + uploadPackService:
		if r.Method != http.MethodPost {
			http.Error(rec, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h.uploadPack(rec, r)
	case RepoPath + "/" + receivePackService:
		http.Error(rec, "push (git-receive-pack) is not served by the fixture", http.StatusForbidden)
	default:
		http.Error(rec, "not found; the fixture is served at "+RepoPath, http.StatusNotFound)
	}
}

func (h *Handler) authorised(r *http.Request) bool {
	_, password, ok := r.BasicAuth()
	// Constant-time so the fixture does not leak the token byte by byte.
	return ok && subtle.ConstantTimeCompare([]byte(password), h.token) == 1
}

func (h *Handler) session() (transport.UploadPackSession, error) {
	ep := &transport.Endpoint{Protocol: "http", Path: RepoPath}
	return h.transport.NewUploadPackSession(ep, nil)
}

// infoRefs answers the smart-HTTP discovery request: the reference
// advertisement preceded by the "# service=" header line. A Git-Protocol:
// version=2 request header is ignored on purpose; clients fall back to
// protocol v0 when the answer is a v0 advertisement.
func (h *Handler) infoRefs(w http.ResponseWriter, r *http.Request) {
	switch service := r.URL.Query().Get("service"); service {
	case uploadPackService:
	case receivePackService:
		http.Error(w, "push (git-receive-pack) is not served by the fixture", http.StatusForbidden)
		return
	default:
		http.Error(w, "only the smart HTTP protocol (service=git-upload-pack) is served", http.StatusForbidden)
		return
	}

	sess, err := h.session()
	if err != nil {
		http.Error(w, "opening upload-pack session: "+err.Error(), http.StatusInternalServerError)
		return
	}
	defer sess.Close()

	ar, err := sess.AdvertisedReferencesContext(r.Context())
	if err != nil {
		http.Error(w, "advertising references: "+err.Error(), http.StatusInternalServerError)
		return
	}
	// go-git's server cannot multiplex the pack; the handler does it (see
	// writePack). Command-line git needs side-band over stateless HTTP: with
	// a raw pack after the NAK, git 2.39 never finishes reading the response.
	if err := ar.Capabilities.Set(capability.Sideband64k); err != nil {
		http.Error(w, "advertising side-band-64k: "+err.Error(), http.StatusInternalServerError)
		return
	}
	ar.Prefix = [][]byte{[]byte("# service=" + uploadPackService), pktline.Flush}

	// Encode into a buffer first so an encoding error can still become a
	// proper HTTP error instead of a truncated 200.
	var buf bytes.Buffer
	if err := ar.Encode(&buf); err != nil {
		http.Error(w, "encoding reference advertisement: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/x-"+uploadPackService+"-advertisement")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(buf.Bytes())
}

// uploadPack answers one stateless-RPC upload-pack round: wants, haves and,
// once the client is done negotiating, the packfile.
func (h *Handler) uploadPack(w http.ResponseWriter, r *http.Request) {
	body := io.Reader(http.MaxBytesReader(w, r.Body, maxRequestBody))
	if r.Header.Get("Content-Encoding") == "gzip" {
		// Command-line git gzips larger request bodies.
		zr, err := gzip.NewReader(body)
		if err != nil {
			http.Error(w, "reading gzip request body: "+err.Error(), http.StatusBadRequest)
			return
		}
		defer zr.Close()
		body = io.LimitReader(zr, maxRequestBody)
	}

	req, done, err := decodeUploadPackRequest(body)
	if err != nil {
		http.Error(w, "decoding upload-pack request: "+err.Error(), http.StatusBadRequest)
		return
	}

	w.Header().Set("Content-Type", "application/x-"+uploadPackService+"-result")
	w.Header().Set("Cache-Control", "no-cache")

	if !done {
		// A negotiation round without "done": go-git's server has no
		// multi_ack support, so it never reports common commits; answer NAK
		// and the client keeps sending haves until it says "done".
		_ = pktline.NewEncoder(w).Encodef("NAK\n")
		return
	}

	sess, err := h.session()
	if err != nil {
		http.Error(w, "opening upload-pack session: "+err.Error(), http.StatusInternalServerError)
		return
	}
	defer sess.Close()

	// The side-band capabilities are the handler's, not go-git's; hide them
	// from go-git's capability check.
	band := sidebandType(req.Capabilities)
	req.Capabilities.Delete(capability.Sideband64k)
	req.Capabilities.Delete(capability.Sideband)

	resp, err := sess.UploadPack(r.Context(), req)
	if err != nil {
		status := http.StatusInternalServerError
		if errors.Is(err, transport.ErrEmptyUploadPackRequest) {
			status = http.StatusBadRequest
		}
		http.Error(w, "upload-pack: "+err.Error(), status)
		return
	}
	defer resp.Close()
	if err := writePack(w, resp, band); err != nil {
		// Headers are already sent; the client sees a truncated pack.
		h.logger.Printf("writing packfile: %v", err)
	}
}

// noSideband marks a client that asked for the raw pack.
const noSideband sideband.Type = 0

func sidebandType(caps *capability.List) sideband.Type {
	switch {
	case caps.Supports(capability.Sideband64k):
		return sideband.Sideband64k
	case caps.Supports(capability.Sideband):
		return sideband.Sideband
	}
	return noSideband
}

// writePack sends the negotiation answer (NAK) and the packfile, wrapped in
// side-band channel 1 packets and a closing flush when the client asked for
// side-band.
func writePack(w io.Writer, resp *packp.UploadPackResponse, band sideband.Type) error {
	if band == noSideband {
		return resp.Encode(w)
	}
	if err := resp.ServerResponse.Encode(w, false); err != nil {
		return fmt.Errorf("writing NAK: %w", err)
	}
	// resp.Read yields the raw packfile once the NAK has been written.
	if _, err := io.Copy(sideband.NewMuxer(band, w), resp); err != nil {
		return fmt.Errorf("streaming pack: %w", err)
	}
	return pktline.NewEncoder(w).Flush()
}

// decodeUploadPackRequest reads "want" lines (and capabilities) up to the
// first flush, then "have" lines until "done" or the end of the body.
// go-git only ships a decoder for the first part.
func decodeUploadPackRequest(r io.Reader) (*packp.UploadPackRequest, bool, error) {
	req := packp.NewUploadPackRequest()
	if err := req.UploadRequest.Decode(r); err != nil {
		return nil, false, err
	}

	s := pktline.NewScanner(r)
	for s.Scan() {
		line := bytes.TrimSuffix(s.Bytes(), []byte("\n"))
		switch {
		case len(line) == 0: // flush between negotiation batches
		case bytes.Equal(line, []byte("done")):
			return req, true, nil
		case bytes.HasPrefix(line, []byte("have ")):
			hex := string(line[len("have "):])
			if len(hex) != 40 {
				return nil, false, fmt.Errorf("malformed have line %q", line)
			}
			req.Haves = append(req.Haves, plumbing.NewHash(hex))
		default:
			return nil, false, fmt.Errorf("unexpected line %q", line)
		}
	}
	if err := s.Err(); err != nil {
		return nil, false, err
	}
	return req, false, nil
}
