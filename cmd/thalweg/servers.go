package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/thalweg/thalweg/cmd/thalweg/internal/config"
	"github.com/thalweg/thalweg/flight/receiver"
	zbserver "github.com/thalweg/thalweg/zerobus/server"
)

// serverFlags are the flags every bundled server shares.
type serverFlags struct {
	listen, dir, tokenEnv, certFile, keyFile *string
}

func addServerFlags(fs *flag.FlagSet, defaultListen string) serverFlags {
	return serverFlags{
		listen:   fs.String("listen", defaultListen, "address to listen on (loopback by default)"),
		dir:      fs.String("dir", "", "data directory (required)"),
		tokenEnv: fs.String("token-env", "", "name of the environment variable holding the bearer token clients must present"),
		certFile: fs.String("tls-cert", "", "TLS certificate file (enables TLS with --tls-key)"),
		keyFile:  fs.String("tls-key", "", "TLS private key file"),
	}
}

// limitFlags are the per-stream and per-connection limits both servers
// share (see docs/operations.md, "Server limits"); 0 keeps the server's
// default.
type limitFlags struct {
	streamPending, decodedMessage *int64
	ackSendTimeout, connIdle      *time.Duration
	maxConns                      *int
}

func addLimitFlags(fs *flag.FlagSet) limitFlags {
	return limitFlags{
		streamPending:  fs.Int64("max-stream-pending-bytes", 0, "bytes one stream may hold pending durability and decoding (0: half the server's pending budget)"),
		decodedMessage: fs.Int64("max-decoded-message-bytes", 0, "largest decoded size of one message, buffers decompressed plus 32 bytes per row (0: default 256 MiB)"),
		ackSendTimeout: fs.Duration("ack-send-timeout", 0, "end a stream whose client has not read an ack for this long (0: default 30s)"),
		maxConns:       fs.Int("max-connections", 0, "most client connections open at once (0: default 1024)"),
		connIdle:       fs.Duration("max-connection-idle", 0, "close a connection without RPCs after this long (0: default 2m)"),
	}
}

// resolve checks the shared flags and returns the token and TLS config.
func (f serverFlags) resolve(env *cliEnv) (token string, tc *tls.Config, err error) {
	if *f.dir == "" {
		return "", nil, errors.New("--dir is required")
	}
	if *f.tokenEnv != "" {
		token = env.getenv(*f.tokenEnv)
		if token == "" {
			return "", nil, fmt.Errorf("--token-env: environment variable %s is not set", *f.tokenEnv)
		}
	}
	if (*f.certFile == "") != (*f.keyFile == "") {
		return "", nil, errors.New("--tls-cert and --tls-key go together")
	}
	if *f.certFile != "" {
		cert, err := tls.LoadX509KeyPair(*f.certFile, *f.keyFile)
		if err != nil {
			return "", nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		tc = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	return token, tc, nil
}

// serverLogger is the log of the bundled servers: text at info level on
// stderr, so that what recovery repaired or set aside at start-up, and
// what a running server refused, is printed.
func serverLogger(env *cliEnv) *slog.Logger {
	return newLogger(config.LogConfig{Level: config.LevelInfo, Format: config.FormatText}, env)
}

// serveUntilDone serves on lis until ctx ends, then stops the server.
func serveUntilDone(ctx context.Context, env *cliEnv, name string, lis net.Listener, serve func(net.Listener) error, stop func() error) int {
	fmt.Fprintf(env.stderr, "thalweg %s: listening on %s\n", name, lis.Addr())
	served := make(chan error, 1)
	go func() { served <- serve(lis) }()
	select {
	case err := <-served:
		if err != nil {
			fmt.Fprintf(env.stderr, "thalweg %s: %v\n", name, err)
			return exitFail
		}
		return exitOK
	case <-ctx.Done():
	}
	err := stop()
	<-served
	if err != nil {
		fmt.Fprintf(env.stderr, "thalweg %s: stop: %v\n", name, err)
		return exitFail
	}
	return exitOK
}

func cmdReceive(ctx context.Context, args []string, env *cliEnv) int {
	fs := newFlagSet("receive", "receive --listen ADDR --dir DIR [flags]", env)
	sf := addServerFlags(fs, "127.0.0.1:8815")
	maxMsg := fs.Int("max-message-size", receiver.DefaultMaxMessageSize, "largest gRPC message accepted, bytes")
	ackDelay := fs.Duration("ack-delay", 0, "hold every durable ack back this long (benchmarks, fault injection)")
	lf := addLimitFlags(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	token, tc, err := sf.resolve(env)
	if err != nil {
		fmt.Fprintf(env.stderr, "thalweg receive: %v\n", err)
		return exitUsage
	}
	srv, err := receiver.New(receiver.Options{Dir: *sf.dir, Token: token, TLSConfig: tc, MaxMessageSize: *maxMsg, AckDelay: *ackDelay,
		MaxStreamPendingBytes: *lf.streamPending, MaxDecodedMessageBytes: *lf.decodedMessage, AckSendTimeout: *lf.ackSendTimeout,
		MaxConnections: *lf.maxConns, MaxConnectionIdle: *lf.connIdle, Logger: serverLogger(env)})
	if err != nil {
		fmt.Fprintf(env.stderr, "thalweg receive: %v\n", err)
		return exitFail
	}
	lis, err := net.Listen("tcp", *sf.listen)
	if err != nil {
		_ = srv.Stop()
		fmt.Fprintf(env.stderr, "thalweg receive: %v\n", err)
		return exitFail
	}
	started := time.Now()
	stop := func() error {
		err := srv.Stop()
		// What the idempotent append did this run, once: the evidence that
		// replays of ordered subscriptions reached the disk only once.
		st := srv.Stats()
		fmt.Fprintf(env.stderr, "thalweg receive: ordered rows already stored, acknowledged and not stored again: %d "+
			"(%d batches dropped whole, %d filtered); ordered batches stored unchecked (no identity columns): %d\n",
			st.DroppedRows, st.DroppedBatches, st.FilteredBatches, st.UncheckedBatches)
		// And how much of the run the disk took: a committer busy nearly
		// all the time means its dataset received as fast as the disk
		// wrote (receiver.SyncStats).
		sy := srv.SyncStats()
		fmt.Fprintf(env.stderr, "thalweg receive: group commit: %d syncs; committers busy writing and syncing %v of the %v run\n",
			sy.Syncs, sy.Busy.Round(time.Millisecond), time.Since(started).Round(time.Millisecond))
		return err
	}
	return serveUntilDone(ctx, env, "receive", lis, srv.Serve, stop)
}

func cmdZerobusServer(ctx context.Context, args []string, env *cliEnv) int {
	fs := newFlagSet("zerobus-server", "zerobus-server --listen ADDR --dir DIR [flags]", env)
	sf := addServerFlags(fs, "127.0.0.1:50051")
	syncEvery := fs.Duration("sync-interval", 10*time.Millisecond, "fsync and acknowledge on this interval")
	rotate := fs.Duration("rotate-every", 0, "send close_stream_signal this long after each stream opened (0: never)")
	ackDelay := fs.Duration("ack-delay", 0, "hold every durable ack back this long (fault injection)")
	dropAfter := fs.Int("drop-stream-after", 0, "abort a stream with Unavailable after this many records (fault injection)")
	lf := addLimitFlags(fs)
	decodedRecord := fs.Int64("max-decoded-record-bytes", 0, "largest estimated decoded size of one PROTO or JSON record (0: default 40 MiB)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	token, tc, err := sf.resolve(env)
	if err != nil {
		fmt.Fprintf(env.stderr, "thalweg zerobus-server: %v\n", err)
		return exitUsage
	}
	srv, err := zbserver.New(zbserver.Options{Dir: *sf.dir, Token: token, TLS: tc, SyncInterval: *syncEvery,
		RotateEvery: *rotate, AckDelay: *ackDelay, DropStreamAfter: *dropAfter,
		MaxStreamPendingBytes: *lf.streamPending, MaxDecodedMessageBytes: *lf.decodedMessage, MaxDecodedRecordBytes: *decodedRecord,
		AckSendTimeout: *lf.ackSendTimeout, MaxConnections: *lf.maxConns, MaxConnectionIdle: *lf.connIdle, Logger: serverLogger(env)})
	if err != nil {
		fmt.Fprintf(env.stderr, "thalweg zerobus-server: %v\n", err)
		return exitFail
	}
	lis, err := net.Listen("tcp", *sf.listen)
	if err != nil {
		_ = srv.Stop()
		fmt.Fprintf(env.stderr, "thalweg zerobus-server: %v\n", err)
		return exitFail
	}
	return serveUntilDone(ctx, env, "zerobus-server", lis, srv.Serve, srv.Stop)
}
