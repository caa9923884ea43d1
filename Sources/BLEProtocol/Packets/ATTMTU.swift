/// The ATT MTUs both ends of a link start from and aim for.
public enum ATTMTU {
    /// Every LE link starts at 23 until an Exchange MTU says otherwise (Core Vol 3 Part F §3.2.8).
    public static let minimum: UInt16 = 23
    /// What our host and the virtual peripherals offer: 247, so that one ATT PDU and its 4-byte
    /// L2CAP header fill exactly one 251-byte LE data packet (the most Data Length Extension
    /// allows, Core Vol 6 Part B §4.5.10): no fragmentation, whatever the peer's controller.
    public static let preferred: UInt16 = 247
}
