print("hwprobe")
