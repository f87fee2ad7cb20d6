defmodule RustyJson.Precompiled.Target do
  @moduledoc false
  # Which target triple the NIF is for (loaded by mix/precompiled.exs): the running VM's, or another machine's when
  # the build is for it (`RUSTYJSON_TARGET`, or Nerves' `MIX_TARGET` with `TARGET_ARCH`/`TARGET_OS`/`TARGET_ABI`);
  # each target's file names (rustler_precompiled's convention); and whether a library is one for that target,
  # from its header alone (ELF machine and class, Mach-O CPU type, PE machine).

  # Every target a precompiled NIF can be made for, and the header its library must have.
  @formats %{
    "x86_64-unknown-linux-gnu" => {:elf, 64, 62},
    "x86_64-unknown-linux-musl" => {:elf, 64, 62},
    "aarch64-unknown-linux-gnu" => {:elf, 64, 183},
    "aarch64-unknown-linux-musl" => {:elf, 64, 183},
    "armv7-unknown-linux-gnueabihf" => {:elf, 32, 40},
    "arm-unknown-linux-gnueabihf" => {:elf, 32, 40},
    "riscv64gc-unknown-linux-gnu" => {:elf, 64, 243},
    "aarch64-apple-darwin" => {:macho, 0x0100000C},
    "x86_64-apple-darwin" => {:macho, 0x01000007},
    "x86_64-pc-windows-gnu" => {:pe, 0x8664},
    "x86_64-pc-windows-msvc" => {:pe, 0x8664}
  }
  @supported Map.keys(@formats) |> Enum.sort()

  # Nerves' 32-bit ARMv6 CPUs (Raspberry Pi Zero and 1): an armv7 library would stop on an illegal instruction.
  @armv6_cpus ["arm1176jzf_s", "arm1176jz_s", "arm1136j_s", "arm1136jf_s"]

  @doc "Every target a precompiled NIF can be made for."
  def supported, do: @supported

  @doc "Whether `target` is one of them."
  def supported?(target), do: Map.has_key?(@formats, target)

  @doc "Whether `target` is a Windows one (its files are DLLs, without the `lib` prefix)."
  def windows?(target), do: String.contains?(target, "-windows-")

  @doc """
  The artifact's file name, as rustler_precompiled names them: `librustyjson_nif-v{version}-nif-{nif}-{target}.so.tar.gz`
  (Linux and macOS alike), `rustyjson_nif-v{version}-nif-{nif}-{target}.dll.tar.gz` on Windows.
  """
  def artifact_name(version, nif_version, target),
    do: "#{artifact_prefix(version, target)}#{nif_version}-#{target}.#{ext(target)}.tar.gz"

  @doc "The artifact's name up to its NIF version (`pick` matches names against it)."
  def artifact_prefix(version, target),
    do: "#{lib_prefix(target)}rustyjson_nif-v#{version}-nif-"

  @doc "The target named in an artifact's name, or nil."
  def of_artifact(name) do
    case Regex.run(~r/-nif-\d+\.\d+-(.+)\.(so|dll)\.tar\.gz\z/, name) do
      [_, target, ext] -> if ext(target) == ext, do: target
      nil -> nil
    end
  end

  @doc "The library inside an artifact: `librustyjson_nif.so`, or `rustyjson_nif.dll` on Windows."
  def library_name(target), do: "#{lib_prefix(target)}rustyjson_nif.#{ext(target)}"

  @doc """
  The file the VM of `target` loads: `erlang:load_nif/2` appends `.dll` on Windows and `.so` everywhere else
  (macOS too) to `priv/native/rustyjson_nif`.
  """
  def installed_name(target), do: "rustyjson_nif.#{ext(target)}"

  @doc "What cargo names the library it builds for `target`."
  def cargo_library(target) do
    cond do
      windows?(target) -> "rustyjson_nif.dll"
      String.contains?(target, "-apple-darwin") -> "librustyjson_nif.dylib"
      true -> "librustyjson_nif.so"
    end
  end

  defp lib_prefix(target), do: if(windows?(target), do: "", else: "lib")
  defp ext(target), do: if(windows?(target), do: "dll", else: "so")

  @doc """
  The targets the build is for, best first, from the environment `env` (a map of variable to value):
    * `{:host, targets}`: no other machine is named; the running VM's targets (`host/1`), `[]` where no artifact
      is made (then cargo builds for it);
    * `{:cross, targets, why}`: `RUSTYJSON_TARGET`, else `MIX_TARGET` (not `host`) with Nerves' `TARGET_ARCH`,
      `TARGET_OS` and `TARGET_ABI` (and `TARGET_CPU` telling ARMv6 from ARMv7); `why` says which;
    * `{:error, message}`: they name no supported target, or `MIX_TARGET` comes without `TARGET_*`.
  """
  def resolve(env, host_info \\ vm_info()) do
    rusty = present(env, "RUSTYJSON_TARGET")
    mix_target = present(env, "MIX_TARGET")

    cond do
      rusty && supported?(rusty) ->
        {:cross, with_fallback(rusty), "RUSTYJSON_TARGET=#{rusty}"}

      rusty ->
        {:error, unknown("RUSTYJSON_TARGET=#{rusty}", rusty)}

      mix_target in [nil, "host"] ->
        {:host, host(host_info)}

      true ->
        nerves(env, mix_target)
    end
  end

  defp nerves(env, mix_target) do
    vars = for name <- ["TARGET_ARCH", "TARGET_OS", "TARGET_ABI"], do: present(env, name)
    why = "MIX_TARGET=#{mix_target} " <> Enum.join(for(v <- vars, do: v || "?"), "/")

    case {vars, present(env, "TARGET_CPU")} do
      {[arch, os, abi], cpu} when arch != nil and os != nil and abi != nil ->
        case nerves_targets(arch, os, abi, cpu) do
          [] -> {:error, unknown(why, "#{arch}-#{os}-#{abi}")}
          targets -> {:cross, targets, why}
        end

      _ ->
        {:error,
         "MIX_TARGET=#{mix_target} is set, but not all of TARGET_ARCH, TARGET_OS and TARGET_ABI (Nerves systems " <>
           "set them): RustyJson cannot tell which machine the NIF is for. Set RUSTYJSON_TARGET to its target " <>
           "triple, one of: #{Enum.join(@supported, ", ")}"}
    end
  end

  # Nerves names targets as zig does (`arm`, `aarch64`, `riscv64`; `gnu`, `gnueabihf`, `musl`).
  defp nerves_targets("arm", "linux", "gnueabihf", cpu) when cpu in @armv6_cpus,
    do: ["arm-unknown-linux-gnueabihf"]

  defp nerves_targets("arm", "linux", "gnueabihf", _cpu),
    do: ["armv7-unknown-linux-gnueabihf", "arm-unknown-linux-gnueabihf"]

  defp nerves_targets("riscv64", "linux", "gnu", _cpu), do: ["riscv64gc-unknown-linux-gnu"]

  defp nerves_targets(arch, "linux", abi, _cpu) when arch in ["x86_64", "aarch64"],
    do: Enum.filter(["#{arch}-unknown-linux-#{abi}"], &supported?/1)

  defp nerves_targets(_arch, _os, _abi, _cpu), do: []

  # A target named outright, then what loads where it does: the ARMv6 build on an ARMv7, the MinGW one where MSVC's
  # is missing (the official Erlang/OTP for Windows loads either).
  defp with_fallback("armv7-unknown-linux-gnueabihf" = t), do: [t, "arm-unknown-linux-gnueabihf"]
  defp with_fallback("x86_64-pc-windows-msvc" = t), do: [t, "x86_64-pc-windows-gnu"]
  defp with_fallback(target), do: [target]

  defp unknown(why, target),
    do:
      "#{why} names #{target}, a target RustyJson has no NIF for; the supported targets are: " <>
        Enum.join(@supported, ", ")

  defp present(env, name), do: if(Map.get(env, name) in [nil, ""], do: nil, else: env[name])

  @doc "What `host/1` needs to know of the running VM."
  def vm_info do
    %{
      system_architecture: List.to_string(:erlang.system_info(:system_architecture)),
      os_type: :os.type(),
      wordsize: :erlang.system_info(:wordsize),
      processor_architecture: System.get_env("PROCESSOR_ARCHITECTURE"),
      musl: musl_vm?(),
      arm_architecture: arm_architecture()
    }
  end

  @doc """
  The running VM's targets, best first, from `vm_info/0`'s map: `[]` where no artifact is made. A 32-bit ARM VM
  takes the armv7 build where the CPU is ARMv7 or later, else the ARMv6 one; a Windows VM the MSVC build, else
  the MinGW one.
  """
  def host(%{os_type: {:win32, _}} = vm) do
    # Erlang/OTP for Windows says `win32` on every CPU; an x86-64 VM (under emulation too) sees AMD64 here.
    if vm.wordsize == 8 and vm.processor_architecture in [nil, "AMD64", "x86_64"],
      do: ["x86_64-pc-windows-msvc", "x86_64-pc-windows-gnu"],
      else: []
  end

  def host(vm) do
    [cpu | rest] = String.split(vm.system_architecture, "-")
    system = Enum.join(rest, "-")

    cond do
      String.contains?(system, "darwin") and vm.wordsize == 8 ->
        Enum.filter(["#{darwin_cpu(cpu)}-apple-darwin"], &supported?/1)

      not String.contains?(system, "linux") ->
        []

      vm.wordsize == 4 ->
        arm_targets(cpu, system, vm.arm_architecture)

      true ->
        linux_64(cpu, system, vm.musl)
    end
  end

  defp darwin_cpu(cpu) when cpu in ["arm", "arm64"], do: "aarch64"
  defp darwin_cpu(cpu), do: cpu

  defp linux_64(cpu, system, musl) do
    libc = if String.contains?(system, "musl") or musl, do: "musl", else: "gnu"

    case cpu do
      cpu when cpu in ["x86_64", "amd64"] -> ["x86_64-unknown-linux-#{libc}"]
      cpu when cpu in ["aarch64", "arm64"] -> ["aarch64-unknown-linux-#{libc}"]
      "riscv64" <> _ when libc == "gnu" -> ["riscv64gc-unknown-linux-gnu"]
      _ -> []
    end
  end

  # `arm-unknown-linux-gnueabihf` (Debian's and Raspberry Pi OS's builds say `arm` whatever the CPU) or
  # `armv6l-...`/`armv7l-...`/`armv8l-...` (built on the machine): the CPU's architecture, when the kernel tells it
  # (an ARMv6 Raspberry Pi runs the same Raspberry Pi OS armhf Erlang as an ARMv7 one), else the triple's.
  defp arm_targets("arm" <> version, system, cpu_arch) do
    cond do
      not String.ends_with?(system, "gnueabihf") or String.contains?(system, "musl") ->
        []

      (cpu_arch || version_number(version)) >= 7 ->
        ["armv7-unknown-linux-gnueabihf", "arm-unknown-linux-gnueabihf"]

      true ->
        ["arm-unknown-linux-gnueabihf"]
    end
  end

  defp arm_targets(_cpu, _system, _cpu_arch), do: []

  # Plain `arm` with the CPU unknown (qemu-user shows the host's /proc/cpuinfo; its emulated CPU is ARMv7 or later).
  defp version_number(""), do: 7

  defp version_number("v" <> rest) do
    case Integer.parse(rest) do
      {n, _} -> n
      :error -> 0
    end
  end

  defp version_number(_), do: 0

  # "CPU architecture: 7" in /proc/cpuinfo (8 for a 32-bit VM on a 64-bit ARM), nil where it is not said.
  defp arm_architecture do
    with {:ok, info} <- File.read("/proc/cpuinfo"),
         [_, n] <- Regex.run(~r/^CPU architecture\s*:\s*(\d+)/m, info) do
      String.to_integer(n)
    else
      _ -> nil
    end
  end

  # Whether the running VM is linked with musl (its triple does not always say): the libraries it has mapped tell,
  # not which loaders the system has installed.
  defp musl_vm? do
    case File.read("/proc/self/maps") do
      {:ok, maps} -> String.contains?(maps, "ld-musl") or String.contains?(maps, "libc.musl")
      {:error, _} -> false
    end
  end

  @doc """
  `:ok` when `library` (its first bytes suffice) is a shared library for `target`: an ELF of type ET_DYN with the
  target's class and machine (little-endian), a Mach-O dylib or bundle of its CPU type (64-bit), or a PE DLL of
  its machine; else `{:error, what}`.
  """
  def check_library(library, target) do
    case Map.fetch(@formats, target) do
      {:ok, format} -> check(format, library)
      :error -> {:error, "#{target} is not a target this check knows"}
    end
  end

  defp check({:elf, class, machine}, library), do: check_elf(library, class, machine)
  defp check({:macho, cpu_type}, library), do: check_macho(library, cpu_type)
  defp check({:pe, machine}, library), do: check_pe(library, machine)

  # e_type and e_machine follow the 16-byte e_ident in both ELF classes.
  defp check_elf(<<0x7F, "ELF", class, 1, _::binary-size(10), type::little-16, found::little-16,
                   _::binary>>, bits, machine)
       when class == div(bits, 32) do
    cond do
      type != 3 -> {:error, "its ELF type is #{type}, not a shared object's (ET_DYN, 3)"}
      found != machine -> {:error, "it is built for ELF machine #{elf_name(found)}, not #{elf_name(machine)}"}
      true -> :ok
    end
  end

  defp check_elf(<<0x7F, "ELF", class, data, _::binary-size(14), _::binary>>, bits, _machine),
    do:
      {:error,
       "it is not a #{bits}-bit little-endian ELF file (class #{class}, data encoding #{data})"}

  defp check_elf(<<0x7F, "ELF", _::binary>>, _bits, _machine),
    do: {:error, "its ELF header is cut short"}

  defp check_elf(library, _bits, _machine), do: {:error, "it is not an ELF file (#{begins(library)})"}

  # MH_MAGIC_64 (little-endian), then cputype, cpusubtype and filetype: MH_DYLIB (6) or MH_BUNDLE (8).
  defp check_macho(<<0xFEEDFACF::little-32, cpu::little-32, _sub::32, type::little-32, _::binary>>, want) do
    cond do
      type not in [6, 8] -> {:error, "its Mach-O file type is #{type}, not a dylib (6) or bundle (8)"}
      cpu != want -> {:error, "it is built for Mach-O CPU type 0x#{hex(cpu)}, not 0x#{hex(want)}"}
      true -> :ok
    end
  end

  defp check_macho(library, _want),
    do: {:error, "it is not a 64-bit Mach-O file (#{begins(library)})"}

  # The DOS header's e_lfanew (at 0x3C) points at "PE\0\0" and the COFF header: Machine, then Characteristics
  # 18 bytes on, whose IMAGE_FILE_DLL bit (0x2000) makes it a DLL.
  defp check_pe(<<"MZ", _::binary-size(58), offset::little-32, _::binary>> = library, want) do
    # Cut at the offset, not matched with it: a size read outside a match is a warning on Elixir 1.20.
    at_pe = if offset <= byte_size(library), do: binary_part(library, offset, byte_size(library) - offset)

    case at_pe do
      <<"PE", 0, 0, machine::little-16, _::binary-size(16), flags::little-16, _::binary>> ->
        cond do
          Bitwise.band(flags, 0x2000) == 0 -> {:error, "it is a PE executable, not a DLL"}
          machine != want -> {:error, "it is built for PE machine 0x#{hex(machine)}, not 0x#{hex(want)}"}
          true -> :ok
        end

      _ ->
        {:error, "its PE header is missing or cut short"}
    end
  end

  defp check_pe(library, _want), do: {:error, "it is not a PE file (#{begins(library)})"}

  defp elf_name(machine) do
    case Map.fetch(%{62 => "x86_64", 183 => "aarch64", 40 => "arm", 243 => "riscv64"}, machine) do
      {:ok, cpu} -> "#{machine} (#{cpu})"
      :error -> "#{machine}"
    end
  end

  defp hex(n), do: Integer.to_string(n, 16) |> String.downcase()

  defp begins(library),
    do: "it begins #{inspect(binary_part(library, 0, min(byte_size(library), 8)))}"
end
