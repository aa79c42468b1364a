// SPDX-License-Identifier: GPL-2.0-only

package harness

import (
	"errors"
	"fmt"
	"net"
	"runtime"

	. "github.com/onsi/ginkgo/v2"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// A deep kernel stack on demand, for SM-DEPTH-01: a UDP sendfile() through
// seven VLAN devices stacked on a dummy device (the nesting limit), traced
// by a chain of four synthetic events fired from hist triggers, each level
// a few frames deeper. Measured at 67 frames on x86_64 and 79 on arm64 for
// the last event of the chain; any one part alone stays far below 64.

// vlanLevels is how many VLANs are stacked: the kernel refuses an eighth.
const vlanLevels = 7

// DeepChainEvents are the synthetic events of the chain, shallowest first;
// the last fires deepest.
var DeepChainEvents = []string{"s1", "s2", "s3", "s4"}

// DeepSender sends one datagram by sendfile() through the stacked devices.
type DeepSender struct {
	sock, file int
}

// Send makes one deep stack: 64 bytes from a memory file to the socket.
func (d *DeepSender) Send() error {
	off := int64(0)
	_, err := unix.Sendfile(d.sock, d.file, &off, 64)
	return err
}

// NewDeepSender builds the device stack in a network namespace of its own,
// so that nothing outside the test sees it, and returns a sender whose
// socket lives there. The namespace and its devices go when the spec ends.
// A kernel that cannot build it (no network namespaces, dummy or VLAN
// devices) makes the spec UNSUPPORTED with the reason.
func NewDeepSender() *DeepSender {
	d, err := OpenDeepSender()
	if errors.Is(err, ErrNotSupported) {
		Unsupported("no deep kernel stack to test with: %v", err)
	}
	Must(err, "building the deep-stack network")
	DeferCleanup(d.Close)
	return d
}

// OpenDeepSender is NewDeepSender for callers outside a spec: an error
// that Is ErrNotSupported means the kernel lacks a part, and Close undoes
// what it made.
func OpenDeepSender() (*DeepSender, error) {
	type result struct {
		sock int
		err  error
	}
	done := make(chan result, 1)
	go func() {
		// The thread is left locked: it ends with the goroutine, and the
		// namespace it entered with it.
		runtime.LockOSThread()
		sock, err := buildDeepNet()
		done <- result{sock, err}
	}()
	r := <-done
	if r.err != nil {
		return nil, r.err
	}
	d := &DeepSender{sock: r.sock, file: -1}
	file, err := unix.MemfdCreate("smct-deep", 0)
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("making a memory file to send from: %w", err)
	}
	d.file = file
	if _, err := unix.Write(file, make([]byte, 64)); err != nil {
		d.Close()
		return nil, fmt.Errorf("filling the memory file: %w", err)
	}
	return d, nil
}

// Close closes the socket, and with it the namespace, and the memory file.
func (d *DeepSender) Close() {
	unix.Close(d.sock)
	if d.file >= 0 {
		unix.Close(d.file)
	}
}

// buildDeepNet runs on a locked thread: it enters a new network namespace,
// stacks the devices, and connects a UDP socket across them. An error that
// Is ErrNotSupported means the kernel lacks a part.
func buildDeepNet() (sock int, err error) {
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		return -1, Lacks("unshare(CLONE_NEWNET): %w (CONFIG_NET_NS?)", err)
	}
	h, err := netlink.NewHandle(unix.NETLINK_ROUTE)
	if err != nil {
		return -1, Lacks("netlink: %w", err)
	}
	defer h.Close()
	var parent netlink.Link = &netlink.Dummy{LinkAttrs: netlink.LinkAttrs{Name: "d0"}}
	if err := h.LinkAdd(parent); err != nil {
		return -1, Lacks("adding a dummy device: %w (CONFIG_DUMMY?)", err)
	}
	for i := 1; i <= vlanLevels; i++ {
		if parent, err = h.LinkByName(parent.Attrs().Name); err != nil {
			return -1, err
		}
		if err := h.LinkSetUp(parent); err != nil {
			return -1, fmt.Errorf("setting %s up: %w", parent.Attrs().Name, err)
		}
		vlan := &netlink.Vlan{LinkAttrs: netlink.LinkAttrs{Name: fmt.Sprintf("v%d", i), ParentIndex: parent.Attrs().Index}, VlanId: 100 + i}
		if err := h.LinkAdd(vlan); err != nil {
			return -1, Lacks("stacking VLAN %d of %d: %w (CONFIG_VLAN_8021Q?)", i, vlanLevels, err)
		}
		parent = vlan
	}
	top, err := h.LinkByName(parent.Attrs().Name)
	if err != nil {
		return -1, err
	}
	if err := h.LinkSetUp(top); err != nil {
		return -1, fmt.Errorf("setting %s up: %w", top.Attrs().Name, err)
	}
	addr := &netlink.Addr{IPNet: &net.IPNet{IP: net.IPv4(10, 0, 0, 1), Mask: net.CIDRMask(24, 32)}}
	if err := h.AddrAdd(top, addr); err != nil {
		return -1, fmt.Errorf("adding 10.0.0.1/24 to %s: %w", top.Attrs().Name, err)
	}
	sock, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, Lacks("a UDP socket: %w (CONFIG_INET?)", err)
	}
	if err := unix.Connect(sock, &unix.SockaddrInet4{Port: 9, Addr: [4]byte{10, 0, 0, 2}}); err != nil {
		unix.Close(sock)
		return -1, fmt.Errorf("connecting to 10.0.0.2:9 through %s: %w", top.Attrs().Name, err)
	}
	return sock, nil
}

// SetUpDeepChain defines the synthetic events and the hist triggers that
// chain them to every transmit, and removes them when the spec ends. A
// kernel without synthetic events or hist triggers makes the spec
// UNSUPPORTED.
func SetUpDeepChain(t *TraceFS) {
	Require(t, Node("synthetic_events"), Event("net/net_dev_start_xmit"))
	undo, err := DeepChain(t)
	DeferCleanup(undo)
	if err != nil {
		Unsupported("%v", err)
	}
}

// DeepChain is SetUpDeepChain for callers outside a spec: undo removes
// what it set up, in reverse order, also after an error.
func DeepChain(t *TraceFS) (undo func(), err error) {
	var undos []func()
	undo = func() {
		for i := len(undos) - 1; i >= 0; i-- {
			undos[i]()
		}
	}
	for _, name := range DeepChainEvents {
		def := name + " unsigned int v"
		if err := t.Append("synthetic_events", def); err != nil {
			return undo, fmt.Errorf("cannot define the synthetic event %q: %w (CONFIG_SYNTH_EVENTS?)", def, err)
		}
		undos = append(undos, func() { t.Append("synthetic_events", "!"+name) })
	}
	// Triggers go before the events they name, each event after its own
	// trigger. Each keeps one key a send, so each asks for the smallest
	// map the kernel makes (128 entries): a hist trigger allocates every
	// entry of its map when set and frees each when removed, 2,048 by
	// default, which under KASAN and kmemleak took 1.3 s to set and 2 to
	// 4 s to remove, a trigger.
	triggers := [][2]string{{"net/net_dev_start_xmit", "hist:keys=len:size=128:l=len:onmatch(net.net_dev_start_xmit).trace(s1,$l)"}}
	for i, name := range DeepChainEvents[:len(DeepChainEvents)-1] {
		next := DeepChainEvents[i+1]
		triggers = append(triggers, [2]string{"synthetic/" + name, fmt.Sprintf("hist:keys=v:size=128:w=v:onmatch(synthetic.%s).trace(%s,$w)", name, next)})
	}
	for _, tr := range triggers {
		node := "events/" + tr[0] + "/trigger"
		if err := t.Append(node, tr[1]); err != nil {
			return undo, fmt.Errorf("cannot set the hist trigger %q on %s: %w (CONFIG_HIST_TRIGGERS?)", tr[1], tr[0], err)
		}
		undos = append(undos, func() { t.Append(node, "!"+tr[1]) })
	}
	return undo, nil
}
