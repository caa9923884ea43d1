/// What a body-composition scale reports beside the weight, as a virtual scale is given it: each
/// family sends the fields its frames have room for, with its final (stable) reading, and leaves
/// the rest out. Nil fields are not measured (a person in socks gives no impedance).
package struct ScaleBodyComposition: Hashable, Sendable {
    package var fatPercent: Double?
    package var waterPercent: Double?
    package var musclePercent: Double?
    package var boneKilograms: Double?
    /// The whole-body impedance the analyser measured, in ohms.
    package var impedanceOhms: Double?

    package init(fatPercent: Double? = nil, waterPercent: Double? = nil, musclePercent: Double? = nil,
                 boneKilograms: Double? = nil, impedanceOhms: Double? = nil) {
        self.fatPercent = fatPercent
        self.waterPercent = waterPercent
        self.musclePercent = musclePercent
        self.boneKilograms = boneKilograms
        self.impedanceOhms = impedanceOhms
    }

    /// The simulated bench's person: plausible figures for an adult of 72 kg, for the families
    /// that carry them.
    package static let bench = ScaleBodyComposition(fatPercent: 21.4, waterPercent: 55.2, musclePercent: 38.1,
                                                    boneKilograms: 3.1, impedanceOhms: 512)

}
