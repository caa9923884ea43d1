/// The test vector of the VB1 spec (`docs/vb1-backup-format.md`): the password, salt, nonce and scrypt
/// parameters, the plaintext, the container they make, its id and its three codes. One copy for
/// every test target (the flows decrypt it, capture decodes its codes).
public enum VB1Vector {
    public static let password = "correct horse battery staple"
    public static let salt: [UInt8] = Array(0x00...0x0F)
    public static let nonce: [UInt8] = Array(0x64...0x6F)
    /// scrypt's log2 N, r and p for the vector.
    public static let logN: UInt8 = 10
    public static let r: UInt8 = 8
    public static let p: UInt8 = 1
    public static let plaintext = Array(#"{"items":[{"issuer":"Example","account":"alice@example.com","secret":"JBSWY3DPEHPK3PXP","digits":6,"period":30}]}"#.utf8)
    public static let containerHex =
        "564c544201010a0801000102030405060708090a0b0c0d0e0f6465666768696a6b6c6d6e6fc5ddad332503921367"
        + "668e5238c69a3f75cfc69e4f82cc4c27de3a38f53b87cb82dc2296a832999ffb187cefaf78ce0b9054bae1ae0bfef0"
        + "5dda29a90f51653bb4ab5cc9e876dad243d4d03d97257507f87c0243dc456edd37579c90929bf787b8702bb0dfe226"
        + "b2a484f81c30decb800671b2ea3e568968b0ced9feaf92ad4380c46bc44ac4425e6f"
    public static let container: [UInt8] = bytes(hex: containerHex)
    public static let id = "32966C6C"
    /// The three codes (the third has spaces inside, which are data).
    public static let codes = [
        "VB1:32966C6C:1/3:.+AFTAW503C1V50X507H0QS00+0J61%H1CT1P.1% CC3DVED5QDO$D%5E41S/K6EK0HK2J/CXHA$4P0180CQR0K",
        "VB1:32966C6C:2/3:4OGAS9A4S197TN7XWPE$R32J%H65AKD43ODUBCFZK10WA*NSAN1IHU4QRYGL2DATO7%TLSNP61F7QQU+QHZ74X4",
        "VB1:32966C6C:3/3:F01LUF2Q8:Y8L/RI3BKCICWJ47H58E9GMOQSCQMK GGP3K7SE8G GEQRTD.APADX6Q*8WJOI0O8I$OU OM OA.B",
    ]
}
