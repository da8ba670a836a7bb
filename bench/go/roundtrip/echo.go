package main

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// The bare Go gRPC round trip against bench/echo.py (method
// /bench.Echo/Chat, raw bytes both ways, one reply per message): the floor
// for any Go gRPC client, as bench/roundtrip.py's measure_echo is for Python.

const echoMethod = "/bench.Echo/Chat"

// rawCodec sends and receives []byte as is, without protobuf.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) {
	switch b := v.(type) {
	case []byte:
		return b, nil
	case *[]byte:
		return *b, nil
	}
	return nil, fmt.Errorf("rawCodec: cannot marshal %T", v)
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	b, ok := v.(*[]byte)
	if !ok {
		return fmt.Errorf("rawCodec: cannot unmarshal into %T", v)
	}
	*b = append((*b)[:0], data...)
	return nil
}

// Name is the content-subtype: application/grpc+proto, which every gRPC
// server accepts; the echo server does not parse what it gets.
func (rawCodec) Name() string { return "proto" }

var chatStream = &grpc.StreamDesc{StreamName: "Chat", ClientStreams: true, ServerStreams: true}

// measureEcho runs warmup+runs streams of iterations round trips each (write
// the payload, read the reply, timestamp) and returns the measured runs'
// per-round-trip latencies in microseconds.
func measureEcho(ctx context.Context, addr string, iterations, runs, warmup, requestBytes int) ([]float64, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	payload := make([]byte, requestBytes)
	for i := range payload {
		payload[i] = 'r'
	}
	samples := []float64{}
	var reply []byte
	for n := 0; n < warmup+runs; n++ {
		streamCtx, cancel := context.WithCancel(ctx)
		stream, err := conn.NewStream(streamCtx, chatStream, echoMethod, grpc.ForceCodec(rawCodec{}), grpc.WaitForReady(true))
		if err != nil {
			cancel()
			return nil, err
		}
		last := time.Now()
		for i := 0; i < iterations; i++ {
			if err := stream.SendMsg(payload); err != nil {
				cancel()
				return nil, fmt.Errorf("send: %w", err)
			}
			if err := stream.RecvMsg(&reply); err != nil {
				cancel()
				return nil, fmt.Errorf("receive: %w", err)
			}
			now := time.Now()
			if n >= warmup {
				samples = append(samples, float64(now.Sub(last).Nanoseconds())/1e3)
			}
			last = now
		}
		if err := stream.CloseSend(); err != nil {
			cancel()
			return nil, err
		}
		// The server ends the stream once it has read the half-close.
		for stream.RecvMsg(&reply) == nil {
		}
		cancel()
	}
	return samples, nil
}
