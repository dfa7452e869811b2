# SPDX-License-Identifier: GPL-2.0
# gdb script (gdb -batch -x trace-path.py): attach to QEMU's gdbstub and
# record, instruction by instruction, the kernel path of every system call
# whose first argument points into ff-icount -t's fixed pages
# (FF_TRACE_BASE), from do_syscall_64() to its return.  Writes one line a
# call: "<nr> <arg0> <arg1> <count> <pc> <pc> ..." to $FF_TRACE_OUT.
# Environment: FF_TRACE_ENTRY (address of do_syscall_64), FF_GDB_PORT, FF_TRACE_OUT, FF_TRACE_CALLS (calls to record
# before detaching).
import os
import gdb

BASE = 0x7F0000000000
port = os.environ["FF_GDB_PORT"]
out = open(os.environ["FF_TRACE_OUT"], "w")
want = int(os.environ.get("FF_TRACE_CALLS", "1000"))

gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("target remote :%s" % port)
# regs->di at offset 0x70 of struct pt_regs; do_syscall_64(regs, nr)
gdb.execute("hbreak *%s if" % os.environ["FF_TRACE_ENTRY"] + "  *(unsigned long *)($rdi + 0x70) >= %#x && "
            "*(unsigned long *)($rdi + 0x70) < %#x" % (BASE, BASE + 8192))
inf = gdb.selected_inferior()
done = 0
while done < want:
    try:
        gdb.execute("continue", to_string=True)
    except gdb.error:
        break
    regs = int(gdb.parse_and_eval("(unsigned long)$rdi"))
    nr = int(gdb.parse_and_eval("(int)$rsi"))
    a0 = int(gdb.parse_and_eval("*(unsigned long *)(%d + 0x70)" % regs))
    a1 = int(gdb.parse_and_eval("*(unsigned long *)(%d + 0x68)" % regs))
    sp = int(gdb.parse_and_eval("(unsigned long)$rsp"))
    ret = int(gdb.parse_and_eval("*(unsigned long *)%d" % sp))
    pcs = []
    while True:
        pc = int(gdb.parse_and_eval("(unsigned long)$pc"))
        if pc == ret:
            break
        pcs.append(pc)
        if len(pcs) > 200000:
            break
        gdb.execute("stepi", to_string=True)
    out.write("%d %#x %#x %d %s\n" % (nr, a0, a1 & 0xffffffff, len(pcs),
                                     " ".join("%x" % p for p in pcs)))
    out.flush()
    done += 1
out.close()
gdb.execute("detach")
