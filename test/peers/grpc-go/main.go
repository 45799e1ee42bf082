// Command grpc-go-xds is a proxyless gRPC peer for Sluice's tests: grpc-go's own xDS client and
// xDS server, speaking the raw-bytes echo service of test/proxyless/echo.ts
// (/sluice.test.Echo/Echo and /sluice.test.Echo/Other) and examples/proxyless/echo.ts
// (/sluice.examples.Echo/Echo): the request is ignored, the answer is the server's name as bytes,
// so Go peers and grpc-js peers can stand in for one another.
//
// Built by `npm run peers` (scripts/peers.ts) into the peers cache; tests find it with
// test/peers/paths.ts. The xDS bootstrap comes from GRPC_XDS_BOOTSTRAP (a file) or
// GRPC_XDS_BOOTSTRAP_CONFIG (its JSON), as for any grpc-go program.
//
// Usage:
//
//	grpc-go-xds -version
//	grpc-go-xds server [flags]
//	  -port N        port to listen on, on every address (required: an xDS server is found by its port)
//	  -name S        the answer to every call (default: the host name)
//	  -xds           serve through xds.NewGRPCServer, configured by the control plane's listener
//	                 (default true; -xds=false serves a plain gRPC server)
//	  -xds-creds     xDS server credentials (mTLS when the control plane asks), plaintext fallback
//	  -health        also serve grpc.health.v1.Health, SERVING (default true)
//	  The server prints "serving <addr> <mode>" on stdout when the xDS serving mode of its listener
//	  changes (and "serving <addr>" at once without -xds); it stops on SIGINT or SIGTERM.
//	grpc-go-xds client [flags]
//	  -target T      the target to dial (default xds:///echo.default.svc.cluster.local:8080)
//	  -n N           number of calls, one after the other (default 1)
//	  -method M      the full method (default /sluice.test.Echo/Echo)
//	  -timeout D     deadline of each call (default 5s)
//	  -interval D    pause between calls (default 0)
//	  -header k=v    request metadata, repeatable
//	  -wait-for-ready  calls wait for a ready connection instead of failing fast
//	  -xds-creds     xDS client credentials (mTLS when the control plane asks), plaintext fallback
//	  One line per call on stdout: the server's answer, or "ERROR <code>: <message>".
//	  Exit status 0 when every call answered, 1 when some failed, 2 on a usage or dial error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	xdscreds "google.golang.org/grpc/credentials/xds"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/xds"
)

// rawMsg is a message carried as raw bytes, with no protobuf framing.
type rawMsg struct{ b []byte }

// rawCodec marshals *rawMsg as its bytes and anything else (health checks) with the proto codec.
type rawCodec struct{ proto encoding.CodecV2 }

func (c rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	if m, ok := v.(*rawMsg); ok {
		return mem.BufferSlice{mem.SliceBuffer(m.b)}, nil
	}
	return c.proto.Marshal(v)
}

func (c rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	if m, ok := v.(*rawMsg); ok {
		m.b = data.Materialize()
		return nil
	}
	return c.proto.Unmarshal(data, v)
}

func (rawCodec) Name() string { return "proto" }

func newCodec() rawCodec { return rawCodec{proto: encoding.GetCodecV2("proto")} }

// echoServer is the handler type of the echo service (RegisterService wants an interface).
type echoServer interface{ answer() []byte }

type echo struct{ name string }

func (e echo) answer() []byte { return []byte(e.name) }

func echoHandler(srv any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
	var in rawMsg
	if err := dec(&in); err != nil {
		return nil, err
	}
	return &rawMsg{b: srv.(echoServer).answer()}, nil
}

// The echo services: test/proxyless/echo.ts's and examples/proxyless/echo.ts's.
var echoDescs = []*grpc.ServiceDesc{
	{
		ServiceName: "sluice.test.Echo",
		HandlerType: (*echoServer)(nil),
		Methods: []grpc.MethodDesc{
			{MethodName: "Echo", Handler: echoHandler},
			{MethodName: "Other", Handler: echoHandler},
		},
	},
	{
		ServiceName: "sluice.examples.Echo",
		HandlerType: (*echoServer)(nil),
		Methods:     []grpc.MethodDesc{{MethodName: "Echo", Handler: echoHandler}},
	},
}

// registrar is what grpc.Server and xds.GRPCServer have in common here.
type registrar interface {
	grpc.ServiceRegistrar
	Serve(net.Listener) error
	Stop()
}

func runServer(args []string) int {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	port := fs.Int("port", 0, "port to listen on (required)")
	host, _ := os.Hostname()
	name := fs.String("name", host, "the answer to every call")
	useXDS := fs.Bool("xds", true, "serve through xds.NewGRPCServer")
	useCreds := fs.Bool("xds-creds", false, "xDS server credentials, plaintext fallback")
	withHealth := fs.Bool("health", true, "serve grpc.health.v1.Health")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *port <= 0 {
		fmt.Fprintln(os.Stderr, "grpc-go-xds server: -port is required")
		return 2
	}
	var creds credentials.TransportCredentials = insecure.NewCredentials()
	if *useCreds {
		c, err := xdscreds.NewServerCredentials(xdscreds.ServerOptions{FallbackCreds: insecure.NewCredentials()})
		if err != nil {
			fmt.Fprintln(os.Stderr, "grpc-go-xds server: xDS credentials:", err)
			return 2
		}
		creds = c
	}
	opts := []grpc.ServerOption{grpc.Creds(creds), grpc.ForceServerCodecV2(newCodec())}
	var srv registrar
	if *useXDS {
		mode := xds.ServingModeCallback(func(addr net.Addr, a xds.ServingModeChangeArgs) {
			line := fmt.Sprintf("serving %s %s", addr, a.Mode)
			if a.Err != nil {
				line += " " + strings.ReplaceAll(a.Err.Error(), "\n", " ")
			}
			fmt.Println(line)
		})
		s, err := xds.NewGRPCServer(append(opts, mode)...)
		if err != nil {
			fmt.Fprintln(os.Stderr, "grpc-go-xds server: xds.NewGRPCServer:", err)
			return 2
		}
		srv = s
	} else {
		srv = grpc.NewServer(opts...)
	}
	for _, desc := range echoDescs {
		srv.RegisterService(desc, echo{name: *name})
	}
	if *withHealth {
		healthpb.RegisterHealthServer(srv, health.NewServer())
	}
	lis, err := net.Listen("tcp", fmt.Sprintf(":%d", *port))
	if err != nil {
		fmt.Fprintln(os.Stderr, "grpc-go-xds server:", err)
		return 2
	}
	if !*useXDS {
		fmt.Println("serving", lis.Addr())
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-stop
		srv.Stop()
	}()
	if err := srv.Serve(lis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		fmt.Fprintln(os.Stderr, "grpc-go-xds server:", err)
		return 1
	}
	return 0
}

type headers []string

func (h *headers) String() string     { return strings.Join(*h, ",") }
func (h *headers) Set(v string) error { *h = append(*h, v); return nil }

func runClient(args []string) int {
	fs := flag.NewFlagSet("client", flag.ContinueOnError)
	target := fs.String("target", "xds:///echo.default.svc.cluster.local:8080", "the target to dial")
	n := fs.Int("n", 1, "number of calls")
	method := fs.String("method", "/sluice.test.Echo/Echo", "the full method")
	timeout := fs.Duration("timeout", 5*time.Second, "deadline of each call")
	interval := fs.Duration("interval", 0, "pause between calls")
	waitForReady := fs.Bool("wait-for-ready", false, "calls wait for a ready connection")
	useCreds := fs.Bool("xds-creds", false, "xDS client credentials, plaintext fallback")
	var hdrs headers
	fs.Var(&hdrs, "header", "request metadata k=v, repeatable")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	md := metadata.MD{}
	for _, h := range hdrs {
		k, v, ok := strings.Cut(h, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "grpc-go-xds client: -header %q is not k=v\n", h)
			return 2
		}
		md.Append(k, v)
	}
	var creds credentials.TransportCredentials = insecure.NewCredentials()
	if *useCreds {
		c, err := xdscreds.NewClientCredentials(xdscreds.ClientOptions{FallbackCreds: insecure.NewCredentials()})
		if err != nil {
			fmt.Fprintln(os.Stderr, "grpc-go-xds client: xDS credentials:", err)
			return 2
		}
		creds = c
	}
	cc, err := grpc.NewClient(*target, grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(newCodec()), grpc.WaitForReady(*waitForReady)))
	if err != nil {
		fmt.Fprintln(os.Stderr, "grpc-go-xds client:", err)
		return 2
	}
	defer cc.Close()
	failed := 0
	for i := 0; i < *n; i++ {
		if i > 0 && *interval > 0 {
			time.Sleep(*interval)
		}
		ctx, cancel := context.WithTimeout(metadata.NewOutgoingContext(context.Background(), md), *timeout)
		out := &rawMsg{}
		err := cc.Invoke(ctx, *method, &rawMsg{}, out)
		cancel()
		if err != nil {
			failed++
			s := status.Convert(err)
			fmt.Printf("ERROR %s: %s\n", s.Code(), strings.ReplaceAll(s.Message(), "\n", " "))
		} else {
			fmt.Println(string(out.b))
		}
	}
	if failed > 0 {
		return 1
	}
	return 0
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: grpc-go-xds server -port N [-name S] [-xds=false] [-xds-creds] [-health=false]")
	fmt.Fprintln(os.Stderr, "       grpc-go-xds client [-target xds:///host:port] [-n N] [-method /pkg.Svc/M] [-timeout D]")
	fmt.Fprintln(os.Stderr, "                          [-interval D] [-header k=v]... [-wait-for-ready] [-xds-creds]")
	fmt.Fprintln(os.Stderr, "       grpc-go-xds -version")
}

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	switch os.Args[1] {
	case "-version", "--version", "version":
		fmt.Printf("grpc-go-xds grpc-go %s %s %s/%s\n", grpc.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	case "server":
		os.Exit(runServer(os.Args[2:]))
	case "client":
		os.Exit(runClient(os.Args[2:]))
	case "-h", "-help", "--help", "help":
		usage()
	default:
		usage()
		os.Exit(2)
	}
}
