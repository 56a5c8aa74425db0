package hostileclient

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
)

// StalledStream is one gRPC streaming call over a raw HTTP/2 connection
// whose client announces a receive window of 0 and never opens it (until
// OpenWindow): the server can send headers but no message, so every Send
// of the server blocks. It answers SETTINGS and PING, as a live client
// does, so the connection itself stays healthy.
type StalledStream struct {
	conn net.Conn
	wmu  sync.Mutex // serializes frame writes
	fr   *http2.Framer
	hbuf bytes.Buffer
	henc *hpack.Encoder

	done chan struct{} // closed when the reader ends
	mu   struct {
		sync.Mutex
		cond *sync.Cond // signalled when a send window grows or the call ends
		// send windows the server granted: the stream's and the
		// connection's (this client honours them, as a real one must).
		streamWin, connWin int64
		initWin            int64 // the server's SETTINGS_INITIAL_WINDOW_SIZE
		code               *codes.Code
		msg                string
		data               int // DATA bytes received on the stream
		reset              bool
		rstCode            http2.ErrCode
		readEr             error
	}
}

// DialStalled opens a connection to addr and starts the call method
// ("/pkg.Service/Method") with the given metadata.
func DialStalled(addr, method string, md map[string]string) (*StalledStream, error) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	s := &StalledStream{conn: conn, fr: http2.NewFramer(conn, conn), done: make(chan struct{})}
	s.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	s.mu.cond = sync.NewCond(&s.mu.Mutex)
	s.mu.streamWin, s.mu.connWin, s.mu.initWin = 65535, 65535, 65535
	s.henc = hpack.NewEncoder(&s.hbuf)
	if _, err := conn.Write([]byte(http2.ClientPreface)); err != nil {
		conn.Close()
		return nil, err
	}
	hdr := [][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", method}, {":authority", addr},
		{"content-type", "application/grpc"}, {"te", "trailers"}}
	for k, v := range md {
		hdr = append(hdr, [2]string{k, v})
	}
	for _, h := range hdr {
		_ = s.henc.WriteField(hpack.HeaderField{Name: h[0], Value: h[1]})
	}
	err = s.write(func() error {
		if err := s.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0}); err != nil {
			return err
		}
		return s.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: s.hbuf.Bytes(), EndHeaders: true})
	})
	if err != nil {
		conn.Close()
		return nil, err
	}
	go s.read()
	return s, nil
}

func (s *StalledStream) write(f func() error) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return f()
}

func (s *StalledStream) read() {
	defer close(s.done)
	for {
		f, err := s.fr.ReadFrame()
		if err != nil {
			s.mu.Lock()
			s.mu.readEr = err
			s.mu.cond.Broadcast()
			s.mu.Unlock()
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				if v, ok := f.Value(http2.SettingInitialWindowSize); ok {
					s.mu.Lock()
					s.mu.streamWin += int64(v) - s.mu.initWin
					s.mu.initWin = int64(v)
					s.mu.cond.Broadcast()
					s.mu.Unlock()
				}
				_ = s.write(s.fr.WriteSettingsAck)
			}
		case *http2.WindowUpdateFrame:
			s.mu.Lock()
			if f.StreamID == 0 {
				s.mu.connWin += int64(f.Increment)
			} else {
				s.mu.streamWin += int64(f.Increment)
			}
			s.mu.cond.Broadcast()
			s.mu.Unlock()
		case *http2.PingFrame:
			if !f.IsAck() {
				_ = s.write(func() error { return s.fr.WritePing(true, f.Data) })
			}
		case *http2.MetaHeadersFrame:
			s.mu.Lock()
			for _, h := range f.Fields {
				switch h.Name {
				case "grpc-status":
					n, _ := strconv.Atoi(h.Value)
					c := codes.Code(n)
					s.mu.code = &c
				case "grpc-message":
					s.mu.msg = h.Value
				}
			}
			s.mu.cond.Broadcast()
			s.mu.Unlock()
		case *http2.DataFrame:
			s.mu.Lock()
			s.mu.data += len(f.Data())
			s.mu.Unlock()
		case *http2.RSTStreamFrame:
			s.mu.Lock()
			s.mu.reset = true
			s.mu.rstCode = f.ErrCode
			s.mu.cond.Broadcast()
			s.mu.Unlock()
		}
	}
}

// Send sends one message on the stream (length-prefixed, uncompressed, in
// one DATA frame of at most 16 KiB), waiting for the server's flow-control
// windows like a real client.
func (s *StalledStream) Send(m proto.Message) error {
	b, err := proto.Marshal(m)
	if err != nil {
		return err
	}
	frame := make([]byte, 5+len(b))
	binary.BigEndian.PutUint32(frame[1:], uint32(len(b)))
	copy(frame[5:], b)
	if len(frame) > 16384 {
		return fmt.Errorf("message of %d bytes does not fit one DATA frame", len(frame))
	}
	n := int64(len(frame))
	s.mu.Lock()
	for (s.mu.streamWin < n || s.mu.connWin < n) && s.mu.readEr == nil {
		s.mu.cond.Wait()
	}
	if err := s.mu.readEr; err != nil {
		s.mu.Unlock()
		return err
	}
	s.mu.streamWin -= n
	s.mu.connWin -= n
	s.mu.Unlock()
	return s.write(func() error { return s.fr.WriteData(1, false, frame) })
}

// Received is the number of DATA bytes the server got through (0 while the
// window is closed).
func (s *StalledStream) Received() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.data
}

// OpenWindow finally opens the stream's and the connection's receive
// windows, so whatever the server queued (messages, then its trailers) is
// delivered.
func (s *StalledStream) OpenWindow() error {
	return s.write(func() error {
		if err := s.fr.WriteWindowUpdate(1, 1<<30); err != nil {
			return err
		}
		return s.fr.WriteWindowUpdate(0, 1<<30)
	})
}

// Status waits up to d for the call's grpc-status trailer and returns it.
func (s *StalledStream) Status(d time.Duration) (codes.Code, string, error) {
	expired := false
	timer := time.AfterFunc(d, func() {
		s.mu.Lock()
		expired = true
		s.mu.cond.Broadcast()
		s.mu.Unlock()
	})
	defer timer.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		switch {
		case s.mu.code != nil:
			return *s.mu.code, s.mu.msg, nil
		case s.mu.reset:
			return codes.Unknown, "", fmt.Errorf("stream reset (%v) without status", s.mu.rstCode)
		case s.mu.readEr != nil:
			return codes.Unknown, "", fmt.Errorf("connection ended without status: %w", s.mu.readEr)
		case expired:
			return codes.Unknown, "", fmt.Errorf("no status within %v", d)
		}
		s.mu.cond.Wait()
	}
}

// Close closes the connection and waits for the reader to end.
func (s *StalledStream) Close() {
	s.conn.Close()
	<-s.done
}
